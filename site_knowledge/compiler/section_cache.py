"""A page's sections cached by its rendered HTML and title: an unchanged page is not parsed again.

Parsing every page's HTML into sections is the largest part of a compile whose embeddings are
all cached (a rebuild after editing one page of a large site). The sections of the pages of
one site live in one JSON file in the cache folder, named for the site and keyed on the code
that cuts them; each save keeps the pages of the latest build only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from site_knowledge.compiler.artifact_cache import code_fingerprint
from site_knowledge.compiler.chunking import merge_small_sections, page_sections
from site_knowledge.compiler.keyed_store import KeyedStore, site_file
from site_knowledge.compiler.model import Section

Cut = list[list[str]]
"""Sections as stored: ``[heading, text, anchor]`` each."""


class SectionCache:
    """``merge_small_sections(page_sections(html, title))``, remembered per site on disk."""

    def __init__(self, cache_dir: Path, site: str) -> None:
        self._store: KeyedStore[Cut] = KeyedStore(site_file(cache_dir, "sections", site),
                                                  code_fingerprint())
        self.path = self._store.path

    def sections(self, html: str, title: str) -> tuple[Section, ...]:
        """The page's sections, parsed only when this HTML and title were not seen before."""
        key = hashlib.sha256(f"{title}\0{html}".encode()).hexdigest()
        cut = self._store.get(key)
        if cut is None:
            cut = [[s.heading, s.text, s.anchor]
                   for s in merge_small_sections(page_sections(html, title))]
            self._store.put(key, cut)
        return tuple(Section(*entry) for entry in cut)

    def save(self) -> None:
        """Write the pages of this build, atomically, when they differ from what was read."""
        self._store.save()
