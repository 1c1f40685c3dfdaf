"""The relevance gate: refuse before any model runs when the site has no evidence (SPEC.md, "Gate").

One implementation of the gate's inputs (`signals`) and of its rule (`accepts`): the reader
calls them for a question, and the compiler's calibration calls the same two functions for
its probes, with arrays of thresholds, so the two can never drift apart.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from site_knowledge.retrieval.lexical import BM25, DocumentFrequencies
from site_knowledge.retrieval.vectors import dequantize

OPEN_GATE: dict[str, Any] = {"min_coverage": 0.0, "min_cosine": -2.0, "strong_cosine": -2.0,
                             "min_margin": -3.0}
"""Thresholds every query clears: ranking measured (or tested) with the gate out of the way."""

Float32Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class GateSignals:
    """What the gate reads from one retrieval query: raw scores, never ranks.

    ``elsewhere`` is the query's best cosine with the questions asked elsewhere that the
    compiler kept for this site (``gate.elsewhere``), -1 when it kept none.
    """

    has_terms: bool
    coverage: float
    cosine: float
    elsewhere: float

    @property
    def margin(self) -> float:
        """How much nearer the site's best passage is than the nearest question from elsewhere."""
        return self.cosine - self.elsewhere


def signals(bm25: BM25 | DocumentFrequencies, terms: Sequence[str], cosines: npt.NDArray[Any],
            elsewhere: npt.NDArray[Any], within: Collection[str] | None = None) -> GateSignals:
    """The gate's inputs for a query.

    Args:
        bm25: The passage index, or its document frequencies of the query's terms (their IDF
            gives the coverage).
        terms: The query's tokens.
        cosines: The query's cosine with every passage the gate may consider.
        elsewhere: The query's cosine with every kept question from elsewhere.
        within: The terms coverage counts as found (default: every term of ``bm25``).

    Returns:
        Whether the query has terms, its IDF coverage, its best passage cosine and its best
        cosine with a question from elsewhere (-1 for none).
    """
    return GateSignals(bool(terms), bm25.coverage(terms, within),
                       float(np.max(cosines, initial=-1.0)),
                       float(np.max(elsewhere, initial=-1.0)))


def accepts(has_terms: Any, coverage: Any, cosine: Any, elsewhere: Any, min_coverage: Any,
            min_cosine: Any, strong_cosine: Any, min_margin: Any) -> Any:
    """SPEC.md's rule: enough known terms and a plausible cosine, or a strong cosine alone; and
    the site's best passage at least ``min_margin`` nearer than any question from elsewhere.

    Element-wise on numpy arrays (calibration scores a grid of thresholds at once) and plain
    on scalars (the reader's one question).
    """
    topical = (has_terms & (coverage >= min_coverage) & (cosine >= min_cosine)) | (
        cosine >= strong_cosine
    )
    return topical & (cosine - elsewhere >= min_margin)


@dataclass(frozen=True)
class GateDecision:
    """The raw signals, the thresholds they were held to, and the verdict."""

    signals: GateSignals
    min_coverage: float
    min_cosine: float
    strong_cosine: float
    min_margin: float

    @property
    def answerable(self) -> bool:
        """Whether the site has evidence enough to let a model answer."""
        s = self.signals
        return bool(accepts(s.has_terms, s.coverage, s.cosine, s.elsewhere, self.min_coverage,
                            self.min_cosine, self.strong_cosine, self.min_margin))

    def as_dict(self) -> dict[str, Any]:
        """Raw scores, thresholds and the verdict, for JSON output."""
        return {
            "answerable": self.answerable,
            "has_terms": self.signals.has_terms,
            "coverage": round(self.signals.coverage, 6),
            "cosine": round(self.signals.cosine, 6),
            "elsewhere": round(self.signals.elsewhere, 6),
            "min_coverage": self.min_coverage,
            "min_cosine": self.min_cosine,
            "strong_cosine": self.strong_cosine,
            "min_margin": self.min_margin,
        }


def decide(gate_signals: GateSignals, thresholds: dict[str, Any]) -> GateDecision:
    """Hold a query's signals to an artifact's calibrated ``gate`` thresholds."""
    return GateDecision(gate_signals, float(thresholds["min_coverage"]),
                        float(thresholds["min_cosine"]), float(thresholds["strong_cosine"]),
                        float(thresholds["min_margin"]))


def elsewhere_entry(kept: npt.NDArray[np.bool_]) -> dict[str, Any]:
    """``gate.elsewhere`` before the writer names its file: how many packaged questions the
    reference file holds and which of them this site leaves out (on topic here)."""
    return {"count": len(kept), "left_out": [int(i) for i in np.flatnonzero(~kept)]}


def decode_elsewhere(gate: dict[str, Any], dimension: int) -> Float32Matrix:
    """The kept questions from elsewhere as a ``(count, dimension)`` matrix (maybe empty).

    ``gate.elsewhere.vectors`` holds the reference file's bytes once the loader has read it
    (`load_artifact`); a gate without ``elsewhere`` (such as `OPEN_GATE`) has none.
    """
    elsewhere = gate.get("elsewhere") or {"count": 0, "left_out": [], "vectors": b""}
    rows = dequantize(elsewhere["vectors"], int(elsewhere["count"]), dimension)
    return np.delete(rows, elsewhere["left_out"], axis=0)
