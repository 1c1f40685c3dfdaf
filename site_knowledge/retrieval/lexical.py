"""BM25 with an IDF that stays positive on small corpora (SPEC.md, "Scoring")."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from itertools import chain

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

K1 = 1.2
B = 0.75
"""The BM25 parameters the compiler writes into ``lexical.k1`` and ``lexical.b``."""


class BM25:
    """A BM25 index over tokenized documents; scoring is a few array operations per term."""

    def __init__(self, documents: Sequence[Sequence[str]], k1: float, b: float) -> None:
        self.size = len(documents)
        counts = np.fromiter((len(doc) for doc in documents), dtype=np.int64, count=self.size)
        lengths = counts.astype(np.float64)
        average = float(lengths.mean()) if self.size and lengths.sum() else 1.0
        norm = k1 * (1.0 - b + b * lengths / average)
        self._postings: dict[str, tuple[npt.NDArray[np.int64], FloatArray]] = {}
        names = list(dict.fromkeys(chain.from_iterable(documents)))
        if not names:
            return
        vocabulary = {term: index for index, term in enumerate(names)}
        term_ids = np.fromiter(map(vocabulary.__getitem__, chain.from_iterable(documents)),
                               dtype=np.int64, count=int(counts.sum()))
        # Each (term, document) pair once, with its count, sorted by term then document.
        pairs, tf_counts = np.unique(term_ids * self.size + np.repeat(np.arange(self.size), counts),
                                     return_counts=True)
        terms, rows = np.divmod(pairs, self.size)
        starts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
        frequencies = np.diff(np.r_[starts, len(terms)])
        idf = np.array([self.idf(int(n)) for n in frequencies])
        tf = tf_counts.astype(np.float64)
        weights = tf * (k1 + 1.0) / (tf + norm[rows]) * np.repeat(idf, frequencies)
        for start, frequency in zip(starts.tolist(), frequencies.tolist(), strict=True):
            end = start + frequency
            self._postings[names[terms[start]]] = (rows[start:end], weights[start:end])

    def idf(self, document_frequency: int) -> float:
        """``ln(1 + (N - n + 0.5) / (n + 0.5))``: positive for every n."""
        n = document_frequency
        return math.log(1.0 + (self.size - n + 0.5) / (n + 0.5))

    def document_frequency(self, term: str) -> int:
        """How many documents contain the term."""
        posting = self._postings.get(term)
        return 0 if posting is None else len(posting[0])

    def vocabulary(self) -> frozenset[str]:
        """Every term of the corpus."""
        return frozenset(self._postings)

    def scores(self, terms: Sequence[str]) -> FloatArray:
        """BM25 score of every document for the distinct query terms."""
        total = np.zeros(self.size, dtype=np.float64)
        for term in dict.fromkeys(terms):
            posting = self._postings.get(term)
            if posting is not None:
                total[posting[0]] += posting[1]
        return total

    def coverage(self, terms: Sequence[str], within: Collection[str] | None = None) -> float:
        """IDF-weighted share of the distinct query terms found anywhere in the corpus, or in
        ``within`` (the terms of the passages of one language)."""
        distinct = list(dict.fromkeys(terms))
        weights = [self.idf(self.document_frequency(term)) for term in distinct]
        total = sum(weights)
        if total == 0.0:
            return 0.0
        found = self._postings if within is None else within
        seen = sum(w for term, w in zip(distinct, weights, strict=True) if term in found)
        return seen / total
