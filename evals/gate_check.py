"""Why the gate refuses answerable questions, and what it lets through, on every site.

For each answer set's questions without history, searched as the gateway searches them: the
answerable ones the relevance gate refuses, with their best cosine and coverage, and the
questions the site cannot answer (off-topic, gibberish, injections, private) that it lets
through, with theirs. For each refused answerable question the search is run again with the
gate open (every threshold at its floor): would its four passages hold an expected page and
every expected fact? That is what lowering a threshold could gain; the let-through cosines
are what it would cost. No model.

    python -m evals.gate_check --sites /tmp/sk [--reuse] [--site S ...] [--out REPORT.md]
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evals.answer_sets import ANSWER_SETS, per_site_main
from evals.fact_recall import TOP_K, held
from site_knowledge.evals.dataset import Item, battery_path, load_items
from site_knowledge.evals.site import SiteIndex
from site_knowledge.evals.text import normalise
from site_knowledge.retrieval import KnowledgeIndex

OPEN = {"min_coverage": 0.0, "min_cosine": -1.0, "strong_cosine": -1.0, "min_margin": -2.0}
"""Gate thresholds that accept every question."""


@dataclass(frozen=True)
class Refused:
    """An answerable question the gate refuses, and what the open gate would have found."""

    id: str
    question: str
    coverage: float
    cosine: float
    page_found: bool
    facts_found: bool | None
    """None for a question without expected facts."""


@dataclass(frozen=True)
class GateCheck:
    """One site: its thresholds, the answerable questions refused, the others let through."""

    site: str
    thresholds: dict[str, float]
    answerable: int
    refused: list[Refused]
    unanswerable: int
    passed_cosines: list[float]


def open_gate(index: KnowledgeIndex) -> KnowledgeIndex:
    """``index`` with a gate that accepts every question (``OPEN``): a shallow copy sharing
    its postings and vectors, whose artifact names other thresholds (the gate reads them at
    each search)."""
    opened = copy.copy(index)
    opened.artifact = {**index.artifact, "gate": {**index.artifact["gate"], **OPEN}}
    return opened


def check(site: SiteIndex, items: Sequence[Item], name: str) -> GateCheck:
    """Search every question without history of ``items`` with the site's gate, and the
    refused answerable ones again with the gate open."""
    index = site.index
    opened = open_gate(index)
    asked = [item for item in items if not item.history]
    refused: list[Refused] = []
    passed: list[float] = []
    for item in asked:
        found = index.search(item.question, top_k=TOP_K)
        if item.must_refuse:
            if found.answerable:
                passed.append(float(found.gate["cosine"]))
            continue
        if found.answerable:
            continue
        hits = opened.search(item.question, top_k=TOP_K).hits
        texts = [normalise(hit.passage.text) for hit in hits]
        refused.append(Refused(
            item.id, item.question, float(found.gate["coverage"]), float(found.gate["cosine"]),
            site.matches(frozenset(hit.source.id for hit in hits), item.sources),
            all(held(fact, texts) for fact in item.facts) if item.facts else None))
    thresholds = {k: float(index.artifact["gate"][k]) for k in OPEN}
    return GateCheck(name, thresholds, sum(1 for i in asked if not i.must_refuse), refused,
                     sum(1 for i in asked if i.must_refuse), passed)


def _span(values: Sequence[float]) -> str:
    return f"{min(values):.2f}–{max(values):.2f}" if values else "–"


def table(rows: Sequence[GateCheck]) -> str:
    """Markdown: per site, the refused answerable questions and the let-through others, then
    each refused question with what the open gate finds."""
    lines = ["| site | gate: coverage / cosine / strong / margin | answerable refused | their "
             "cosine | open gate: expected page / all facts | cannot-answer let through | "
             "their cosine |", "|---|---|---:|---|---|---:|---|"]
    for row in rows:
        t = row.thresholds
        pages = sum(r.page_found for r in row.refused)
        facts = sum(bool(r.facts_found) for r in row.refused)
        lines.append(
            f"| {row.site} | {t['min_coverage']:g} / {t['min_cosine']:g} / "
            f"{t['strong_cosine']:g} / {t['min_margin']:g} | {len(row.refused)} of "
            f"{row.answerable} | {_span([r.cosine for r in row.refused])} | {pages} / {facts} | "
            f"{len(row.passed_cosines)} of {row.unanswerable} | {_span(row.passed_cosines)} |")
    lines.append("")
    for row in rows:
        for r in row.refused:
            facts = "no facts asked" if r.facts_found is None else \
                f"all facts {'found' if r.facts_found else 'not found'}"
            lines.append(f"- {row.site} `{r.id}` {r.question!r}: coverage {r.coverage:.2f}, "
                         f"cosine {r.cosine:.3f}; open gate: expected page "
                         f"{'found' if r.page_found else 'not found'}, {facts}")
    return "\n".join(lines)


def measure(site_dir: Path, name: str) -> list[GateCheck]:
    """The check of one built site with its answer set."""
    return [check(SiteIndex.load(site_dir), load_items(ANSWER_SETS[name].battery or battery_path()),
                  name)]


def main(argv: Sequence[str] | None = None) -> int:
    """Build (or reuse) the sites, check each answer set's gate decisions, print the table."""
    return per_site_main(__doc__ or "", measure, table, argv)


if __name__ == "__main__":
    raise SystemExit(main())
