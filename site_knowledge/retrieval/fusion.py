"""Reciprocal rank fusion and the one-passage-per-page walk (SPEC.md, "Fusion")."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def ranked(scores: FloatArray, limit: int, positive_only: bool = False,
           keep: npt.NDArray[np.bool_] | None = None) -> list[int]:
    """Indices of the ``limit`` best scores (among ``keep``), ties broken by index ascending."""
    order = np.argsort(-scores, kind="stable")
    if keep is not None:
        order = order[keep[order]]
    if positive_only:
        order = order[scores[order] > 0]
    return [int(i) for i in order[:limit]]


def rank_map(order: Sequence[int]) -> dict[int, int]:
    """Index -> 1-based rank."""
    return {index: rank for rank, index in enumerate(order, start=1)}


def diverse_top(order: Sequence[int], source_of: Sequence[int], top_k: int, cap: int,
                lead: int = 1, capped: Sequence[bool] = (),
                score: Callable[[int], float] | None = None, lead_share: float = 0.0) -> list[int]:
    """Keep at most ``cap`` passages per source until ``top_k``; fill from the skipped ones.

    The first ``lead`` passages of ``order`` whose ``score`` is at least ``lead_share`` of the
    first one's are kept whatever their source's count, unless ``capped`` marks that source
    (by index): an ontology category, whose passages are separate facts, not one page's
    continuing text (SPEC.md, "Fusion" step 4).
    """
    kept: list[int] = []
    skipped: list[int] = []
    per_source: dict[int, int] = {}
    floor = lead_share * score(order[0]) if order and score is not None else 0.0
    for position, index in enumerate(order):
        if len(kept) == top_k:
            break
        source = source_of[index]
        leading = (position < lead and not (capped and capped[source])
                   and (score is None or score(index) >= floor))
        if leading or per_source.get(source, 0) < cap:
            per_source[source] = per_source.get(source, 0) + 1
            kept.append(index)
        else:
            skipped.append(index)
    return kept + skipped[: top_k - len(kept)]
