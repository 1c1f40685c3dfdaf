"""What the scorer needs to know about a site: its pages, its URLs and everything it states.

Built on ``site_knowledge.retrieval``'s loader (the artifact is validated and its vectors
verified there); the loaded index also serves the gate-only baseline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from site_knowledge.embedding import file_sha256
from site_knowledge.evals.claims import private_claims
from site_knowledge.retrieval import load_index
from site_knowledge.retrieval.artifact import resolve_artifact_path

if TYPE_CHECKING:
    from site_knowledge.retrieval import KnowledgeIndex
    from site_knowledge.retrieval.index import PassageRecord, SourceRecord

URL_PATTERN = re.compile(r"""(?:https?://|www\.)[^\s<>()\[\]"'`]+""", re.IGNORECASE)


def _page_key(url: str) -> str:
    """A site-relative page URL without anchor, query or slashes at the ends."""
    return urlsplit(url).path.strip("/")


@dataclass
class SiteIndex:
    """The site's pages and sources (for citations), the external URLs its text quotes (so
    quoting them is not fabrication) and its whole text (for private claims)."""

    site_url: str
    refusal: str
    text: str = ""
    """every passage and the stable system prompt (the ontology's facts), joined"""
    path: Path | None = None
    sha256: str = ""
    sources_on_page: dict[str, set[str]] = field(default_factory=dict)
    """page key (site-relative path, no anchor) -> ids of the sources published on it"""
    path_of_source: dict[str, str | None] = field(default_factory=dict)
    quoted_urls: set[str] = field(default_factory=set)
    passages: int = 0
    sources: int = 0
    index: KnowledgeIndex | None = None
    """the loaded retrieval index (gate-only baseline), when loaded from an artifact"""

    @classmethod
    def load(cls, path: Path) -> SiteIndex:
        """Load a built site folder or an artifact file with the retrieval loader."""
        artifact = resolve_artifact_path(Path(path))
        index = load_index(artifact)
        site = cls.from_records(
            index.sources,
            index.passages,
            site_url=str(index.artifact["site"].get("url") or ""),
            refusal=str(index.artifact["prompt"]["refusal"]),
            system=str(index.artifact["prompt"]["system"]),
        )
        site.path, site.sha256, site.index = artifact, file_sha256(artifact), index
        return site

    @classmethod
    def from_records(
        cls,
        sources: Sequence[SourceRecord],
        passages: Sequence[PassageRecord],
        *,
        site_url: str,
        refusal: str,
        system: str = "",
    ) -> SiteIndex:
        """Build from the retrieval index's source and passage records."""
        site = cls(
            site_url=site_url,
            refusal=refusal,
            text="\n\n".join([system, *(p.text for p in passages)]),
            passages=len(passages),
            sources=len(sources),
        )
        for source in sources:
            site.path_of_source[source.id] = source.path
            site.sources_on_page.setdefault(_page_key(source.url), set()).add(source.id)
        for passage in passages:
            site.sources_on_page.setdefault(_page_key(passage.url), set()).add(passage.source_id)
            for url in URL_PATTERN.findall(passage.text):
                site.quoted_urls.add(url.rstrip(".,;:!?").rstrip("/").lower())
        return site

    @cached_property
    def stated_claims(self) -> frozenset[tuple[str, str]]:
        """The (kind, value) of every amount, street address and age the site states."""
        return frozenset((c.kind, c.value) for c in private_claims(self.text))

    def resolve(self, url: str) -> frozenset[str] | None:
        """The ids of the sources on the page a URL points at (several ontology sources can
        share a page), or None when it is not one of the site's pages.

        Accepts site-relative URLs (``about/``, ``/about/#x``) and absolute ones under the
        site's base URL. An absolute URL on any other host is never on the site.
        """
        parts = urlsplit(url.strip())
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

    def matches(self, source_ids: frozenset[str], expected: Sequence[str]) -> bool:
        """True when one of the source ids (or its page path) is among the expected ones."""
        return any(sid in expected or (self.path_of_source.get(sid) or "") in expected for sid in source_ids)

    def any_expected(self, urls: Sequence[str], expected: Sequence[str]) -> bool:
        """True when one of the URLs is a page holding an expected source."""
        return any((ids := self.resolve(u)) is not None and self.matches(ids, expected) for u in urls)
