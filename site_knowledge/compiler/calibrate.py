"""Calibrate the relevance gate on the site itself.

Answerable probes are questions made from the site's headings. Their best cosine is taken
with the heading's own section left out (otherwise the probe matches its own words and the
cosine threshold lands far too high); their coverage is taken over the whole site. Negative
probes are the packaged questions from elsewhere (``offtopic.txt``), in sections: general
knowledge, other software and devices, injections, gibberish.

Two stages. The topical thresholds (coverage, cosine, strong cosine) are the most lenient that
keep the probes' recall at the target while refusing the most general questions: the other
sections are on purpose left out of this stage, since a threshold that refuses "How do I do X
in another framework?" on a docs site also refuses a visitor's paraphrase (measured: fitted on
every section, it refused a quarter of the hand-written answerable questions on three real
sites). The packaged questions the site matches poorly are then kept as the gate's examples of
elsewhere, and the margin (how much nearer the site's best passage must be than the nearest of
them) is the highest one that costs at most ``MARGIN_COST`` of the probes; each negative is
scored against the others (leave-one-out).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from site_knowledge.compiler.offtopic import offtopic_questions, offtopic_sections
from site_knowledge.retrieval.gate import GateSignals, accepts, elsewhere_entry, signals
from site_knowledge.retrieval.lexical import DocumentFrequencies
from site_knowledge.retrieval.tokenizer import tokenize
from site_knowledge.retrieval.vectors import quantize

TARGET_RECALL = 0.95
MAX_PROBES = 240
TEMPLATES = ("What is {}?", "Tell me about {}.", "How does {} work?", "{}?")
COSINE_GRID = np.round(np.arange(0.0, 0.61, 0.01), 2)
COVERAGE_GRID = np.round(np.arange(0.0, 1.001, 0.05), 2)
STRONG_GRID = np.append(np.round(np.arange(0.40, 0.90, 0.02), 2), 1.01)
MARGIN_GRID = np.round(np.arange(-0.40, 0.21, 0.02), 2)
MARGIN_COST = 0.01
"""The share of the heading probes the margin may refuse on top of the topical thresholds."""
OFF = -3.0
"""A margin every query clears."""

TOO_SMALL = {"min_coverage": 0.0, "min_cosine": 0.0, "strong_cosine": 1.01, "min_margin": OFF}
"""A site with no headings or a single passage: any query with terms and a cosine above 0."""

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Probe:
    """A calibration question and the passages left out while scoring it."""

    question: str
    left_out: frozenset[int]


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


@dataclass(frozen=True)
class ProbeSignals:
    """The reader's gate signals for a set of probes, one array per signal."""

    has_terms: npt.NDArray[np.bool_]
    coverage: FloatArray
    cosine: FloatArray
    elsewhere: FloatArray

    def accepted(self, *thresholds: Any) -> Any:
        """`accepts` on these probes; thresholds may be arrays that broadcast against them."""
        return accepts(self.has_terms, self.coverage, self.cosine, self.elsewhere, *thresholds)


def _site_signals(queries: npt.NDArray[np.float32], terms: Sequence[Sequence[str]],
                  left_out: Sequence[frozenset[int]], frequencies: DocumentFrequencies,
                  vectors: npt.NDArray[np.float32]) -> list[GateSignals]:
    """The reader's gate signals for each probe (its tokens in ``terms``), its own section's
    passages left out; the ``elsewhere`` cosine is filled in once the kept questions from
    elsewhere are known."""
    cosine_matrix = vectors @ queries.T
    rows: list[GateSignals] = []
    for column, (query_terms, excluded) in enumerate(zip(terms, left_out, strict=True)):
        cosines = cosine_matrix[:, column].copy()
        if excluded:
            cosines[list(excluded)] = -1.0
        rows.append(signals(frequencies, query_terms, cosines, np.empty(0)))
    return rows


def _probe_signals(rows: Sequence[GateSignals], elsewhere: FloatArray) -> ProbeSignals:
    return ProbeSignals(np.array([r.has_terms for r in rows]),
                        np.array([r.coverage for r in rows]),
                        np.array([r.cosine for r in rows]), elsewhere)


def kept_elsewhere(positive_cosines: FloatArray, negative_cosines: FloatArray) -> npt.NDArray[np.bool_]:
    """Which packaged questions stay as examples of elsewhere on this site: those the site
    matches less well than it matches half of its own probes. A packaged question that is on
    topic here (a framework's how-to on that framework's docs) would veto real questions."""
    return negative_cosines < float(np.median(positive_cosines))


def _best_elsewhere(similarity: npt.NDArray[Any], kept: npt.NDArray[np.bool_],
                    leave_self_out: bool) -> FloatArray:
    """Each probe's best cosine with the kept questions from elsewhere, -1 for none; a
    negative probe never counts itself (leave-one-out)."""
    scores = np.where(kept[None, :], similarity, -1.0)
    if leave_self_out:
        np.fill_diagonal(scores, -1.0)
    return np.max(scores, axis=1, initial=-1.0)


def calibrate_gate(passage_tokens: Sequence[Sequence[str]], headings: Sequence[str],
                   vectors: npt.NDArray[np.float32], stopwords: frozenset[str],
                   embed: Embed) -> tuple[dict[str, Any], bytes]:
    """Choose the gate's thresholds and its examples of elsewhere for this site.

    The probes are scored by the reader's own code: the lexical coverage and the gate's
    `signals` and `accepts`, over the passages as the reader tokenizes them. The packaged
    questions the site matches poorly are kept as examples of elsewhere (`kept_elsewhere`);
    each negative probe is scored against the others (leave-one-out).

    Returns:
        The artifact's ``gate`` object, with a ``calibration`` report, and the gate's
        reference file: every packaged question's vector in the sidecar layout, the same
        bytes for every site built with this encoder (``gate.elsewhere`` names the rows this
        site leaves out).
    """
    probes = heading_probes(headings)
    sections = offtopic_sections()
    negatives = offtopic_questions()
    negative_vectors = embed(negatives)
    reference = quantize(negative_vectors)
    if not probes or len(passage_tokens) < 2:
        return _gate(TOO_SMALL, np.zeros(len(negatives), dtype=np.bool_),
                     {"probes": len(probes), "note": "too small to calibrate"}), reference
    probe_terms = [tokenize(p.question, stopwords) for p in probes]
    negative_terms = [tokenize(question, stopwords) for question in negatives]
    # Coverage is all calibration asks of the lexical index: the probes' own terms counted.
    frequencies = DocumentFrequencies(passage_tokens, set(chain(*probe_terms, *negative_terms)))
    probe_vectors = embed([p.question for p in probes])
    positive_rows = _site_signals(probe_vectors, probe_terms, [p.left_out for p in probes],
                                  frequencies, vectors)
    negative_rows = _site_signals(negative_vectors, negative_terms,
                                  [frozenset()] * len(negatives), frequencies, vectors)
    kept = kept_elsewhere(np.array([r.cosine for r in positive_rows]),
                          np.array([r.cosine for r in negative_rows]))
    positive = _probe_signals(positive_rows, _best_elsewhere(
        probe_vectors @ negative_vectors.T, kept, leave_self_out=False))
    negative = _probe_signals(negative_rows, _best_elsewhere(
        negative_vectors @ negative_vectors.T, kept, leave_self_out=True))
    section_of = np.array([name for name, questions in sections.items() for _ in questions])
    topical = _choose_topical(positive, _subset(negative, section_of == "general"))
    thresholds = {**topical, "min_margin": _choose_margin(positive, topical)}
    report = {
        "answerable_probes": len(probes),
        "offtopic_probes": len(negatives),
        "elsewhere_kept": int(kept.sum()),
        "target_recall": TARGET_RECALL,
        "margin_cost": MARGIN_COST,
        "recall": round(float(positive.accepted(*thresholds.values()).mean()), 4),
        "false_accept": round(float(negative.accepted(*thresholds.values()).mean()), 4),
        "false_accept_by_section": {
            name: round(float(_subset(negative, section_of == name).accepted(
                *thresholds.values()).mean()), 4)
            for name in sections
        },
        "method": "heading probes with their own section left out; topical thresholds against "
                  "the general questions; the margin over the kept questions from elsewhere "
                  "(leave-one-out) as high as costs at most margin_cost of the probes",
    }
    return _gate(thresholds, kept, report), reference


def _subset(probes: ProbeSignals, mask: npt.NDArray[np.bool_]) -> ProbeSignals:
    return ProbeSignals(probes.has_terms[mask], probes.coverage[mask], probes.cosine[mask],
                        probes.elsewhere[mask])


def _choose_topical(positive: ProbeSignals, negative: ProbeSignals) -> dict[str, float]:
    """Coverage and cosine thresholds (no margin): recall at the target, then the fewest
    negatives let through, then the lowest coverage (a heading question uses only the site's
    own words, so its coverage flatters a visitor's), then the most recall, then the most
    lenient cosines."""
    recall = _acceptance_grid(positive, OFF)
    false_accept = _acceptance_grid(negative, OFF)
    strong_i, cos_i, cov_i = np.meshgrid(np.arange(len(STRONG_GRID)), np.arange(len(COSINE_GRID)),
                                         np.arange(len(COVERAGE_GRID)), indexing="ij")
    # lexsort: the last key sorts first.
    order = np.lexsort((strong_i.ravel(), cos_i.ravel(), -recall.ravel(), cov_i.ravel(),
                        false_accept.ravel(), ~(recall.ravel() >= TARGET_RECALL)))
    best = np.unravel_index(order[0], recall.shape)
    return {"min_coverage": float(COVERAGE_GRID[best[2]]),
            "min_cosine": float(COSINE_GRID[best[1]]),
            "strong_cosine": float(STRONG_GRID[best[0]])}


def _choose_margin(positive: ProbeSignals, topical: dict[str, float]) -> float:
    """The highest margin that refuses at most ``MARGIN_COST`` of the probes the topical
    thresholds let through: the margin only adds refusals, of questions nearer elsewhere."""
    base = float(positive.accepted(*topical.values(), OFF).mean())
    affordable = [float(m) for m in MARGIN_GRID
                  if float(positive.accepted(*topical.values(), m).mean()) >= base - MARGIN_COST]
    return max(affordable, default=OFF)


def _acceptance_grid(probes: ProbeSignals, min_margin: float) -> FloatArray:
    """Share accepted for every (strong, min_cosine, min_coverage) threshold of the grids."""
    accepted = probes.accepted(COVERAGE_GRID[None, None, :, None], COSINE_GRID[None, :, None, None],
                               STRONG_GRID[:, None, None, None], min_margin)
    return np.asarray(accepted).mean(axis=3)


def _gate(thresholds: dict[str, float], kept: npt.NDArray[np.bool_],
          report: dict[str, Any]) -> dict[str, Any]:
    return {**{k: float(v) for k, v in thresholds.items()},
            "elsewhere": elsewhere_entry(kept), "calibration": report}
