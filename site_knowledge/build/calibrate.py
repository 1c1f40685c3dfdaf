"""Calibrate the relevance gate on the site itself.

Answerable probes are questions made from the site's headings. Their best cosine is taken
with the heading's own section left out (otherwise the probe matches its own words and the
cosine threshold lands far too high); their coverage is taken over the whole site, since a
visitor asking about a section uses words the site has. Unanswerable probes are
general-knowledge questions shipped with the package. The thresholds chosen are the most
lenient ones that keep the answerable recall at the target while refusing as many off-topic
probes as possible; the coverage threshold is relaxed first, since heading probes always use
the site's words while real paraphrases do not.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from site_knowledge.retrieval.gate import GateSignals, accepts, signals
from site_knowledge.retrieval.lexical import BM25, K1, B
from site_knowledge.retrieval.tokenizer import tokenize

TARGET_RECALL = 0.95
MAX_PROBES = 240
TEMPLATES = ("What is {}?", "Tell me about {}.", "How does {} work?", "{}?")
COSINE_GRID = np.round(np.arange(0.0, 0.61, 0.01), 2)
COVERAGE_GRID = np.round(np.arange(0.0, 1.001, 0.05), 2)
STRONG_GRID = np.append(np.round(np.arange(0.40, 0.90, 0.02), 2), 1.01)

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Probe:
    """A calibration question and the passages left out while scoring it."""

    question: str
    left_out: frozenset[int]


def offtopic_questions() -> list[str]:
    """The packaged questions no site should answer (``offtopic.txt``, ``#`` lines are comments)."""
    text = resources.files("site_knowledge.build").joinpath("offtopic.txt").read_text("utf-8")
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def heading_probes(headings: Sequence[str]) -> list[Probe]:
    """One question per distinct section heading, leaving that section's passages out."""
    sections: dict[str, set[int]] = {}
    for index, heading in enumerate(headings):
        leaf = heading.split(" > ")[-1].strip()
        if leaf:
            sections.setdefault(leaf, set()).add(index)
    leaves = sorted(sections)
    step = max(1, math.ceil(len(leaves) / MAX_PROBES))
    return [
        Probe(TEMPLATES[n % len(TEMPLATES)].format(leaf), frozenset(sections[leaf]))
        for n, leaf in enumerate(leaves[::step])
    ]


def _signals(queries: Sequence[str], left_out: Sequence[frozenset[int]], bm25: BM25,
             vectors: npt.NDArray[np.float32], stopwords: frozenset[str],
             embed: Embed) -> tuple[npt.NDArray[np.bool_], FloatArray, FloatArray]:
    """The reader's gate signals for each probe, its own section's passages left out."""
    cosine_matrix = vectors @ embed(queries).T
    rows: list[GateSignals] = []
    for column, (query, excluded) in enumerate(zip(queries, left_out, strict=True)):
        cosines = cosine_matrix[:, column].copy()
        if excluded:
            cosines[list(excluded)] = -1.0
        rows.append(signals(bm25, tokenize(query, stopwords), cosines))
    return (np.array([r.has_terms for r in rows]), np.array([r.coverage for r in rows]),
            np.array([r.cosine for r in rows]))


def calibrate_gate(passage_tokens: Sequence[Sequence[str]], headings: Sequence[str],
                   vectors: npt.NDArray[np.float32], stopwords: frozenset[str],
                   embed: Embed) -> dict[str, Any]:
    """Choose ``min_coverage``, ``min_cosine`` and ``strong_cosine`` for this site.

    The probes are scored by the reader's own code: BM25's coverage and the gate's
    `signals` and `accepts`, over the passages as the reader tokenizes them.

    Returns:
        The artifact's ``gate`` object, with a ``calibration`` report.
    """
    probes = heading_probes(headings)
    negatives = offtopic_questions()
    if not probes or len(passage_tokens) < 2:
        return _gate(0.0, 0.0, 1.01, {"probes": len(probes), "note": "too small to calibrate"})
    bm25 = BM25(passage_tokens, K1, B)
    positive = _signals([p.question for p in probes], [p.left_out for p in probes], bm25,
                        vectors, stopwords, embed)
    negative = _signals(negatives, [frozenset()] * len(negatives), bm25, vectors, stopwords,
                        embed)
    recall = _acceptance_grid(*positive)
    false_accept = _acceptance_grid(*negative)
    strong_i, cos_i, cov_i = np.meshgrid(np.arange(len(STRONG_GRID)), np.arange(len(COSINE_GRID)),
                                         np.arange(len(COVERAGE_GRID)), indexing="ij")
    # Best: recall at the target, then fewest false accepts, then most recall, then the most
    # lenient coverage, cosine and strong-cosine thresholds (lexsort: last key sorts first).
    order = np.lexsort((strong_i.ravel(), cos_i.ravel(), cov_i.ravel(), -recall.ravel(),
                        false_accept.ravel(), ~(recall.ravel() >= TARGET_RECALL)))
    best = np.unravel_index(order[0], recall.shape)
    strong = float(STRONG_GRID[best[0]])
    min_cos = float(COSINE_GRID[best[1]])
    min_cov = float(COVERAGE_GRID[best[2]])
    report = {
        "answerable_probes": len(probes),
        "offtopic_probes": len(negatives),
        "target_recall": TARGET_RECALL,
        "recall": round(float(accepts(*positive, min_cov, min_cos, strong).mean()), 4),
        "false_accept": round(float(accepts(*negative, min_cov, min_cos, strong).mean()), 4),
        "method": "heading probes with their own section left out; packaged off-topic probes",
    }
    return _gate(min_cov, min_cos, strong, report)


def _acceptance_grid(has_terms: npt.NDArray[np.bool_], coverage: FloatArray,
                     cosine: FloatArray) -> FloatArray:
    """Share accepted for every (strong, min_cosine, min_coverage) threshold of the grids."""
    accepted = accepts(has_terms, coverage, cosine,
                       COVERAGE_GRID[None, None, :, None], COSINE_GRID[None, :, None, None],
                       STRONG_GRID[:, None, None, None])
    return np.asarray(accepted).mean(axis=3)


def _gate(min_cov: float, min_cos: float, strong: float, report: dict[str, Any]) -> dict[str, Any]:
    return {"min_coverage": float(min_cov), "min_cosine": float(min_cos),
            "strong_cosine": float(strong), "calibration": report}
