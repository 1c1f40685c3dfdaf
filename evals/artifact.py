"""What the evals need from a built knowledge artifact: its identity and its URLs.

The evals read the artifact through the package's own loader, which expands its compact form
(``site_knowledge/retrieval/SPEC.md``); they only need ids, paths, URLs, the site's base URL,
the refusal text and a hash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from site_knowledge.embedding import file_sha256
from site_knowledge.retrieval.artifact import load_artifact

URL_PATTERN = re.compile(r"""(?:https?://|www\.)[^\s<>()\[\]"'`]+""", re.IGNORECASE)
ARTIFACT_RELPATH = Path("assets") / "site-knowledge" / "site-knowledge.json"


def find_artifact(path: Path) -> Path:
    """Return the artifact JSON for a built site folder or an artifact path."""
    if path.is_dir():
        candidate = path / ARTIFACT_RELPATH
        if not candidate.is_file():
            raise FileNotFoundError(f"{path}: no {ARTIFACT_RELPATH} (build the site first)")
        return candidate
    return path


sha256_file = file_sha256


def _page_key(url: str) -> str:
    """A site-relative page URL without anchor, query or slashes at the ends."""
    parts = urlsplit(url)
    return parts.path.strip("/")


@dataclass
class SiteIndex:
    """The artifact's sources and URLs, for scoring citations and spotting made-up links."""

    path: Path
    sha256: str
    site_url: str
    refusal: str
    sources_on_page: dict[str, set[str]] = field(default_factory=dict)
    """page key (site-relative path, no anchor) -> ids of the sources published on it"""
    path_of_source: dict[str, str | None] = field(default_factory=dict)
    quoted_urls: set[str] = field(default_factory=set)
    """external URLs that the site's own text contains (quoting them is not fabrication)"""
    embedding_model: str = ""
    passages: int = 0
    sources: int = 0

    @classmethod
    def load(cls, artifact: Path) -> SiteIndex:
        """Read an artifact JSON file (or a built site folder)."""
        artifact = find_artifact(artifact)
        data, _ = load_artifact(artifact)
        return cls.from_data(data, artifact, sha256_file(artifact))

    @classmethod
    def from_data(cls, data: dict[str, Any], path: Path, sha256: str) -> SiteIndex:
        """Build from an artifact as the package's loader returns it (expanded)."""
        site = data.get("site") or {}
        prompt = data.get("prompt") or {}
        index = cls(
            path=path,
            sha256=sha256,
            site_url=str(site.get("url") or ""),
            refusal=str(prompt.get("refusal") or ""),
            embedding_model=str((data.get("embedding") or {}).get("model") or ""),
            passages=len(data.get("passages", [])),
            sources=len(data.get("sources", [])),
        )
        for src in data.get("sources", []):
            index.path_of_source[src["id"]] = src.get("path")
            index.sources_on_page.setdefault(_page_key(src.get("url") or ""), set()).add(src["id"])
        for passage in data.get("passages", []):
            key = _page_key(passage.get("url") or "")
            index.sources_on_page.setdefault(key, set()).add(passage["source"])
            for url in URL_PATTERN.findall(passage.get("text") or ""):
                index.quoted_urls.add(url.rstrip(".,;:!?").rstrip("/").lower())
        return index

    def resolve(self, url: str) -> frozenset[str] | None:
        """The ids of the sources on the page a URL points at (several ontology sources can
        share a page), or None when it is not one of the site's pages.

        Accepts site-relative URLs (``about/``, ``/about/#x``) and absolute ones under the
        site's base URL. An absolute URL on any other host is never on the site.
        """
        url = url.strip()
        parts = urlsplit(url)
        if parts.scheme in ("mailto", "tel"):
            return None
        if parts.scheme or parts.netloc:
            base = urlsplit(self.site_url)
            if not base.netloc or parts.netloc.lower() != base.netloc.lower():
                return None
            rel = parts.path[len(base.path) :] if parts.path.startswith(base.path) else parts.path
        else:
            rel = parts.path
        key = rel.strip("/")
        if key.endswith("index.html"):
            key = key[: -len("index.html")].strip("/")
        found = self.sources_on_page.get(key)
        return frozenset(found) if found else None

    def quotes(self, url: str) -> bool:
        """True when the site's own text contains this URL."""
        return url.rstrip(".,;:!?").rstrip("/").lower() in self.quoted_urls

    def matches(self, source_ids: frozenset[str], expected: tuple[str, ...]) -> bool:
        """True when one of the source ids (or its page path) is among the expected ones."""
        return any(sid in expected or (self.path_of_source.get(sid) or "") in expected for sid in source_ids)
