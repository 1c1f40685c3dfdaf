"""Passage tokens cached by text: a rebuild tokenizes only the passages it has not seen.

The gate's calibration reads every passage as the reader tokenizes it, which was the largest
part of a compile whose embeddings are all cached (a rebuild after editing one page of a large
site). The tokens of one site live in one JSON file in the cache folder, named for the site
and keyed on the code and the stopwords that produce them; each save keeps the texts of the
latest build only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

from site_knowledge.compiler.artifact_cache import code_fingerprint
from site_knowledge.compiler.keyed_store import KeyedStore, site_file
from site_knowledge.retrieval.tokenizer import tokenize


class TokenCache:
    """``tokenize(text, stopwords)`` for many texts, remembered per site on disk."""

    def __init__(self, cache_dir: Path, site: str, stopwords: frozenset[str]) -> None:
        self._stopwords = stopwords
        self._store: KeyedStore[str] = KeyedStore(
            site_file(cache_dir, "tokens", site),
            hashlib.sha256(f"{code_fingerprint()}\0{' '.join(sorted(stopwords))}".encode())
            .hexdigest())
        self.path = self._store.path

    def tokens(self, texts: Iterable[str]) -> SplitTokens:
        """Each text's tokens, tokenizing only the texts this cache has not seen.

        Tokens never hold whitespace, so a text's tokens are kept joined by spaces and split
        when read.
        """
        joined: list[str] = []
        for text in texts:
            key = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
            tokens = self._store.get(key)
            if tokens is None:
                tokens = " ".join(tokenize(text, self._stopwords))
                self._store.put(key, tokens)
            joined.append(tokens)
        return SplitTokens(joined)

    def save(self) -> None:
        """Write the texts of this build, atomically, when they differ from what was read."""
        self._store.save()


class SplitTokens(Sequence[list[str]]):
    """Texts' tokens split from their joined form when read: a large site's passages never
    hold all their token lists (millions of small strings) at once."""

    def __init__(self, joined: list[str]) -> None:
        self._joined = joined

    def __len__(self) -> int:
        return len(self._joined)

    @overload
    def __getitem__(self, index: int) -> list[str]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[str]]: ...

    def __getitem__(self, index: int | slice) -> list[str] | list[list[str]]:
        if isinstance(index, slice):
            return [tokens.split() for tokens in self._joined[index]]
        return self._joined[index].split()

    def __iter__(self) -> Iterator[list[str]]:
        return (tokens.split() for tokens in self._joined)
