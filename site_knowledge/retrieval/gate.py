"""The relevance gate: refuse before any model runs when the site has no evidence (SPEC.md, "Gate").

One implementation of the gate's inputs (`signals`) and of its rule (`accepts`): the reader
calls them for a question, and the compiler's calibration calls the same two functions for
its probes, with arrays of thresholds, so the two can never drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from site_knowledge.retrieval.lexical import BM25

OPEN_GATE: dict[str, Any] = {"min_coverage": 0.0, "min_cosine": -2.0, "strong_cosine": -2.0}
"""Thresholds every query clears: ranking measured (or tested) with the gate out of the way."""


@dataclass(frozen=True)
class GateSignals:
    """What the gate reads from one retrieval query: raw scores, never ranks."""

    has_terms: bool
    coverage: float
    cosine: float


def signals(bm25: BM25, terms: Sequence[str], cosines: npt.NDArray[Any]) -> GateSignals:
    """The gate's inputs for a query.

    Args:
        bm25: The passage index (its IDF gives the coverage).
        terms: The query's tokens.
        cosines: The query's cosine with every passage the gate may consider.

    Returns:
        Whether the query has terms, its IDF coverage, and its best cosine (-1 for none).
    """
    return GateSignals(bool(terms), bm25.coverage(terms), float(np.max(cosines, initial=-1.0)))


def accepts(has_terms: Any, coverage: Any, cosine: Any, min_coverage: Any, min_cosine: Any,
            strong_cosine: Any) -> Any:
    """SPEC.md's rule: enough known terms and a plausible cosine, or a strong cosine alone.

    Element-wise on numpy arrays (calibration scores a grid of thresholds at once) and plain
    on scalars (the reader's one question).
    """
    return (has_terms & (coverage >= min_coverage) & (cosine >= min_cosine)) | (
        cosine >= strong_cosine
    )


@dataclass(frozen=True)
class GateDecision:
    """The raw signals, the thresholds they were held to, and the verdict."""

    signals: GateSignals
    min_coverage: float
    min_cosine: float
    strong_cosine: float

    @property
    def answerable(self) -> bool:
        """Whether the site has evidence enough to let a model answer."""
        s = self.signals
        return bool(accepts(s.has_terms, s.coverage, s.cosine, self.min_coverage,
                            self.min_cosine, self.strong_cosine))

    def as_dict(self) -> dict[str, Any]:
        """Raw scores, thresholds and the verdict, for JSON output."""
        return {
            "answerable": self.answerable,
            "has_terms": self.signals.has_terms,
            "coverage": round(self.signals.coverage, 6),
            "cosine": round(self.signals.cosine, 6),
            "min_coverage": self.min_coverage,
            "min_cosine": self.min_cosine,
            "strong_cosine": self.strong_cosine,
        }


def decide(gate_signals: GateSignals, thresholds: dict[str, Any]) -> GateDecision:
    """Hold a query's signals to an artifact's calibrated ``gate`` thresholds."""
    return GateDecision(gate_signals, float(thresholds["min_coverage"]),
                        float(thresholds["min_cosine"]), float(thresholds["strong_cosine"]))
