"""Whole-build memo: when every input is unchanged, the previous compile result is reused.

A warm ``mkdocs build`` of an unchanged site then costs one hash over the inputs and one
read, instead of re-chunking every page and re-calibrating the gate. The memo holds the
artifact's bytes as written (compact and already validated), so a hit is neither parsed nor
validated again: only its build time is rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, astuple, dataclass
from pathlib import Path
from typing import Any

from site_knowledge.compiler.writer import Sidecars

KEEP = 8
PREFIX = "artifact-"
SIDECARS = (".bin", ".elsewhere")
"""The memo's file suffixes for `Sidecars`' vectors and elsewhere, in field order."""
SUFFIXES = (".json", *SIDECARS, ".counts")


@dataclass(frozen=True)
class Memo:
    """A memoised compile result: the artifact's bytes, its sidecars and what it holds."""

    payload: bytes
    sidecars: Sidecars
    sources: int
    passages: int


PACKAGE = Path(__file__).resolve().parents[1]
FINGERPRINTED = ("compiler/**/*", "retrieval/**/*", "embedding.py")
"""The files under the package whose code shapes a compile result."""


def code_fingerprint(package: Path = PACKAGE) -> str:
    """SHA-256 of the compiler's and retrieval's own files: a code change is an input change."""
    digest = hashlib.sha256()
    for path in sorted(p for pattern in FINGERPRINTED for p in package.glob(pattern)):
        if path.is_file() and path.suffix in {".py", ".json", ".txt", ".j2"}:
            digest.update(path.read_bytes())
    return digest.hexdigest()


def input_key(*parts: Any) -> str:
    """SHA-256 over JSON renderings of the build inputs (dataclasses included); a list is
    rendered item by item, so a site's pages never become one string of all their HTML."""
    digest = hashlib.sha256(code_fingerprint().encode())
    for part in parts:
        listed = isinstance(part, list | tuple)
        for item in part if listed else [part]:
            digest.update(b"[" if listed else b"")
            rendered = json.dumps(item, default=_plain, sort_keys=True, ensure_ascii=False)
            digest.update(rendered.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot key {type(value).__name__}")


def has_entries(cache_dir: Path) -> bool:
    """Whether the folder holds any memoised compile result (a site was built with it)."""
    return any(cache_dir.glob(f"{PREFIX}*.json"))


def load(cache_dir: Path, key: str) -> Memo | None:
    """The memoised compile result for ``key``, or None."""
    base = cache_dir / f"{PREFIX}{key[:32]}"
    try:
        payload = base.with_suffix(".json").read_bytes()
        sidecars = Sidecars(*(base.with_suffix(suffix).read_bytes() for suffix in SIDECARS))
        counts = json.loads(base.with_suffix(".counts").read_text(encoding="utf-8"))
        memo = Memo(payload, sidecars, int(counts["sources"]), int(counts["passages"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    os.utime(base.with_suffix(".json"))
    return memo


def store(cache_dir: Path, key: str, memo: Memo) -> None:
    """Memoise a compile result; keep the most recently used few."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    base = cache_dir / f"{PREFIX}{key[:32]}"
    counts = json.dumps({"sources": memo.sources, "passages": memo.passages}).encode()
    files = dict(zip(SUFFIXES, (memo.payload, *astuple(memo.sidecars), counts), strict=True))
    for suffix, data in reversed(files.items()):
        partial = base.with_name(f"{base.name}.{os.getpid()}.tmp")
        partial.write_bytes(data)
        partial.replace(base.with_suffix(suffix))
    entries = sorted(cache_dir.glob(f"{PREFIX}*.json"), key=lambda p: p.stat().st_mtime)
    for stale in entries[:-KEEP]:
        for suffix in files:
            stale.with_suffix(suffix).unlink(missing_ok=True)
