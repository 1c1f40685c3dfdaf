"""The relevance gate: refuse before any model runs when the site has no evidence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GateDecision:
    """The raw signals, the thresholds they were held to, and the verdict."""

    has_terms: bool
    coverage: float
    cosine: float
    min_coverage: float
    min_cosine: float
    strong_cosine: float

    @property
    def answerable(self) -> bool:
        """SPEC.md: enough known terms and a plausible cosine, or a strong cosine alone."""
        return (
            self.has_terms and self.coverage >= self.min_coverage and self.cosine >= self.min_cosine
        ) or self.cosine >= self.strong_cosine

    def as_dict(self) -> dict[str, Any]:
        """Raw scores, thresholds and the verdict, for JSON output."""
        return {
            "answerable": self.answerable,
            "coverage": round(self.coverage, 6),
            "cosine": round(self.cosine, 6),
            "min_coverage": self.min_coverage,
            "min_cosine": self.min_cosine,
            "strong_cosine": self.strong_cosine,
        }


def decide(has_terms: bool, coverage: float, cosine: float,
           thresholds: dict[str, Any]) -> GateDecision:
    """Apply an artifact's ``gate`` thresholds to a query's coverage and best cosine."""
    return GateDecision(has_terms, coverage, cosine, float(thresholds["min_coverage"]),
                        float(thresholds["min_cosine"]), float(thresholds["strong_cosine"]))
