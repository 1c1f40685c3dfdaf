"""BM25 with an IDF that stays positive on small corpora (SPEC.md, "Scoring")."""

from __future__ import annotations

import math
from array import array
from collections.abc import Collection, Iterable, Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

K1 = 1.2
B = 0.75
"""The BM25 parameters the compiler writes into ``lexical.k1`` and ``lexical.b``."""


class _TermIds(dict[str, int]):
    """Term -> id in order of first appearance; a term not yet seen gets the next id."""

    @classmethod
    def of(cls, terms: Collection[str]) -> _TermIds:
        """The ids of a fixed set of terms (`indexed` then gives -1 for any other)."""
        ids = cls()
        for term in terms:
            ids.setdefault(term, len(ids))
        return ids

    def __missing__(self, term: str) -> int:
        self[term] = len(self)
        return len(self) - 1

    def indexed(self, term: str) -> int:
        """The term's id, or -1 for a term not in the set."""
        return self.get(term, -1)


class BM25:
    """A BM25 index over tokenized documents; scoring is a few array operations per term."""

    def __init__(self, documents: Iterable[Sequence[str]], k1: float, b: float,
                 terms: Collection[str] | None = None) -> None:
        """Index ``documents``, read once in one pass (each may be made as it is read, as the
        compiler's cached tokens are); with ``terms``, only those terms get postings (a caller
        that asks about known terms only, as the gate's calibration does), the lengths and IDF
        staying those of the whole documents."""
        vocabulary = _TermIds() if terms is None else _TermIds.of(terms)
        term_of = vocabulary.__getitem__ if terms is None else vocabulary.indexed
        lengths_read: list[int] = []
        ids_read = array("q")
        for document in documents:
            lengths_read.append(len(document))
            ids_read.extend(map(term_of, document))
        self.size = len(lengths_read)
        counts = np.array(lengths_read, dtype=np.int64)
        lengths = counts.astype(np.float64)
        average = float(lengths.mean()) if self.size and lengths.sum() else 1.0
        norm = k1 * (1.0 - b + b * lengths / average)
        self._postings: dict[str, tuple[npt.NDArray[np.int64], FloatArray]] = {}
        names = list(vocabulary)
        term_ids = np.frombuffer(ids_read, dtype=np.int64) if ids_read else np.empty(0, np.int64)
        rows = np.repeat(np.arange(self.size), counts)
        if terms is not None:
            indexed = term_ids >= 0
            term_ids, rows = term_ids[indexed], rows[indexed]
        if not len(term_ids):
            return
        # Each (term, document) pair once, with its count, sorted by term then document.
        pairs, tf_counts = np.unique(term_ids * self.size + rows, return_counts=True)
        pair_terms, pair_rows = np.divmod(pairs, self.size)
        starts = np.flatnonzero(np.r_[True, pair_terms[1:] != pair_terms[:-1]])
        frequencies = np.diff(np.r_[starts, len(pair_terms)])
        idf = np.array([self.idf(int(n)) for n in frequencies])
        tf = tf_counts.astype(np.float64)
        weights = tf * (k1 + 1.0) / (tf + norm[pair_rows]) * np.repeat(idf, frequencies)
        for start, frequency in zip(starts.tolist(), frequencies.tolist(), strict=True):
            end = start + frequency
            self._postings[names[pair_terms[start]]] = (pair_rows[start:end], weights[start:end])

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
