"""BM25 with an IDF that stays positive on small corpora (SPEC.md, "Scoring")."""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

K1 = 1.2
B = 0.75
"""The BM25 parameters the compiler writes into ``lexical.k1`` and ``lexical.b``."""


def idf_of(size: int, document_frequency: int) -> float:
    """``ln(1 + (N - n + 0.5) / (n + 0.5))`` for n of N documents: positive for every n."""
    n = document_frequency
    return math.log(1.0 + (size - n + 0.5) / (n + 0.5))


def _coverage(size: int, document_frequency: Callable[[str], int], terms: Sequence[str],
              found: Collection[str]) -> float:
    """IDF-weighted share of the distinct ``terms`` that are in ``found``."""
    distinct = list(dict.fromkeys(terms))
    weights = [idf_of(size, document_frequency(term)) for term in distinct]
    total = sum(weights)
    if total == 0.0:
        return 0.0
    return sum(w for term, w in zip(distinct, weights, strict=True) if term in found) / total


class DocumentFrequencies:
    """How many documents hold each of a few terms: all a query's coverage asks, so the gate's
    calibration counts the probes' terms instead of indexing the whole site."""

    def __init__(self, documents: Iterable[Iterable[str]], terms: Collection[str]) -> None:
        """Count, in one pass over ``documents``, the documents holding each of ``terms``."""
        wanted = frozenset(terms)
        counts: Counter[str] = Counter()
        size = 0
        for document in documents:
            size += 1
            counts.update(wanted.intersection(document))
        self.size = size
        self._frequencies = dict(counts)

    def document_frequency(self, term: str) -> int:
        """How many documents contain the term (0 for a term not counted)."""
        return self._frequencies.get(term, 0)

    def coverage(self, terms: Sequence[str], within: Collection[str] | None = None) -> float:
        """As `BM25.coverage`, for queries made of the counted terms."""
        return _coverage(self.size, self.document_frequency, terms,
                         self._frequencies if within is None else within)


class _TermIds(dict[str, int]):
    """Term -> id in order of first appearance; a term not yet seen gets the next id."""

    def __missing__(self, term: str) -> int:
        self[term] = len(self)
        return len(self) - 1


class BM25:
    """A BM25 index over tokenized documents; scoring is a few array operations per term."""

    def __init__(self, documents: Iterable[Sequence[str]], k1: float, b: float) -> None:
        """Index ``documents``, read once in one pass (each may be made as it is read, as the
        compiler's cached tokens are)."""
        vocabulary = _TermIds()
        term_of = vocabulary.__getitem__
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
        if not len(term_ids):
            return
        # Each (term, document) pair once, with its count, sorted by term then document.
        pairs, tf_counts = np.unique(term_ids * self.size + rows, return_counts=True)
        pair_terms, pair_rows = np.divmod(pairs, self.size)
        starts = np.flatnonzero(np.r_[True, pair_terms[1:] != pair_terms[:-1]])
        frequencies = np.diff(np.r_[starts, len(pair_terms)])
        idfs = np.array([idf_of(self.size, int(n)) for n in frequencies])
        tf = tf_counts.astype(np.float64)
        weights = tf * (k1 + 1.0) / (tf + norm[pair_rows]) * np.repeat(idfs, frequencies)
        for start, frequency in zip(starts.tolist(), frequencies.tolist(), strict=True):
            end = start + frequency
            self._postings[names[pair_terms[start]]] = (pair_rows[start:end], weights[start:end])

    def idf(self, document_frequency: int) -> float:
        """`idf_of` this index's documents."""
        return idf_of(self.size, document_frequency)

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
        return _coverage(self.size, self.document_frequency, terms,
                         self._postings if within is None else within)
