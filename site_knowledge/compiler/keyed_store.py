"""One JSON file of values by key, valid for one code key, that keeps what the latest build used.

The compiler's per-page and per-passage caches (sections, tokens) share this shape: a build
reads the file once, looks values up by a content hash, and saves only the entries it used, so
the file follows the site and never grows with its history.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Generic, TypeVar

V = TypeVar("V")


def site_file(cache_dir: Path, kind: str, site: str) -> Path:
    """The cache folder's ``kind`` file for one site (``sections-<hash of site>.json``)."""
    return cache_dir / f"{kind}-{hashlib.sha256(site.encode()).hexdigest()[:16]}.json"


class KeyedStore(Generic[V]):
    """Values by key in ``path``, read when ``code`` matches the file's, written by `save`."""

    def __init__(self, path: Path, code: str) -> None:
        self.path = path
        self._code = code
        self._stored = self._load()
        self._used: dict[str, V] = {}

    def _load(self) -> dict[str, V]:
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(stored, dict) or stored.get("code") != self._code:
            return {}
        entries = stored.get("entries")
        return entries if isinstance(entries, dict) else {}

    def get(self, key: str) -> V | None:
        """The value stored or put under ``key`` (marked as used by this build), or None."""
        value = self._used.get(key)
        if value is None:
            value = self._stored.get(key)
            if value is not None:
                self._used[key] = value
        return value

    def put(self, key: str, value: V) -> None:
        """Keep ``value`` under ``key`` for this build."""
        self._used[key] = value

    def save(self) -> None:
        """Write the entries this build used, atomically, when they differ from what was read."""
        if self._used.keys() == self._stored.keys():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps({"code": self._code, "entries": self._used},
                                      ensure_ascii=False), encoding="utf-8")
        partial.replace(self.path)
        self._stored = self._used
