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
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from site_knowledge.retrieval.tokenizer import tokenize

TARGET_RECALL = 0.95
MAX_PROBES = 240
TEMPLATES = ("What is {}?", "Tell me about {}.", "How does {} work?", "{}?")
COSINE_GRID = np.round(np.arange(0.0, 0.61, 0.01), 2)
COVERAGE_GRID = np.round(np.arange(0.0, 1.001, 0.05), 2)
STRONG_GRID = np.append(np.round(np.arange(0.40, 0.90, 0.02), 2), 1.01)

NO_TERMS = -1.0  # below every threshold: a query without tokens needs the strong cosine

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class Probe:
    """A calibration question and the passages left out while scoring it."""

    question: str
    left_out: frozenset[int]


def offtopic_questions() -> list[str]:
    """The packaged general-knowledge questions no site should answer."""
    text = resources.files("site_knowledge.build").joinpath("offtopic.txt").read_text("utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


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


def _features(queries: Sequence[str], left_out: Sequence[frozenset[int]],
              passage_tokens: Sequence[Sequence[str]], vectors: npt.NDArray[np.float32],
              stopwords: frozenset[str], embed: Embed) -> tuple[npt.NDArray[np.float64], ...]:
    size = len(passage_tokens)
    document_frequency: Counter[str] = Counter()
    for tokens in passage_tokens:
        document_frequency.update(set(tokens))
    cosine_matrix = vectors @ embed(queries).T
    coverages, cosines = [], []
    for column, (query, excluded) in enumerate(zip(queries, left_out, strict=True)):
        seen = total = 0.0
        for term in dict.fromkeys(tokenize(query, stopwords)):
            df = document_frequency[term]
            idf = math.log(1.0 + (size - df + 0.5) / (df + 0.5))
            total += idf
            seen += idf if df > 0 else 0.0
        coverages.append(seen / total if total else NO_TERMS)
        column_scores = cosine_matrix[:, column].copy()
        if excluded:
            column_scores[list(excluded)] = -1.0
        cosines.append(float(column_scores.max(initial=-1.0)))
    return np.array(coverages), np.array(cosines)


def calibrate_gate(passage_tokens: Sequence[Sequence[str]], headings: Sequence[str],
                   vectors: npt.NDArray[np.float32], stopwords: frozenset[str],
                   embed: Embed) -> dict[str, Any]:
    """Choose ``min_coverage``, ``min_cosine`` and ``strong_cosine`` for this site.

    Returns:
        The artifact's ``gate`` object, with a ``calibration`` report.
    """
    probes = heading_probes(headings)
    negatives = offtopic_questions()
    if not probes or len(passage_tokens) < 2:
        return _gate(0.0, 0.0, 1.01, {"probes": len(probes), "note": "too small to calibrate"})
    pos_cov, pos_cos = _features([p.question for p in probes], [p.left_out for p in probes],
                                 passage_tokens, vectors, stopwords, embed)
    neg_cov, neg_cos = _features(negatives, [frozenset()] * len(negatives), passage_tokens,
                                 vectors, stopwords, embed)
    recall = _acceptance_grid(pos_cov, pos_cos)
    false_accept = _acceptance_grid(neg_cov, neg_cos)
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
        "recall": round(float(_accepts(pos_cov, pos_cos, min_cov, min_cos, strong).mean()), 4),
        "false_accept": round(float(_accepts(neg_cov, neg_cos, min_cov, min_cos, strong).mean()), 4),
        "method": "heading probes with their own section left out; packaged off-topic probes",
    }
    return _gate(min_cov, min_cos, strong, report)


def _acceptance_grid(coverage: npt.NDArray[np.float64],
                     cosine: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Share accepted for every (strong, min_cosine, min_coverage) threshold of the grids."""
    strong = cosine[None, None, None, :] >= STRONG_GRID[:, None, None, None]
    enough_cosine = cosine[None, :] >= COSINE_GRID[:, None]
    enough_coverage = coverage[None, :] >= COVERAGE_GRID[:, None]
    both = enough_cosine[:, None, :] & enough_coverage[None, :, :]
    return (strong | both[None, :, :, :]).mean(axis=3)


def _accepts(coverage: npt.NDArray[np.float64], cosine: npt.NDArray[np.float64],
             min_cov: float, min_cos: float, strong: float) -> npt.NDArray[np.bool_]:
    return ((coverage >= min_cov) & (cosine >= min_cos)) | (cosine >= strong)


def _gate(min_cov: float, min_cos: float, strong: float, report: dict[str, Any]) -> dict[str, Any]:
    return {"min_coverage": float(min_cov), "min_cosine": float(min_cos),
            "strong_cosine": float(strong), "calibration": report}
