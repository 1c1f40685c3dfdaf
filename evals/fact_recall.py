"""Fact recall of the evidence, no model: do the passages the gateway would hand the model hold
every expected fact of an answer set's items, and an expected page?

The answer sets' facts are what a visitor must read in the answer; a model can only state
them when the retrieval puts them in its four excerpts, so this is the ceiling of "facts
present" and the quickest check of a retrieval change on every site (seconds, against an
hour for the answer sets). Each item with facts is searched as the gateway searches it (its
earlier questions joined by the artifact's follow-up rule); a fact counts when one passage
holds all its parts (the scorer's matching, `site_knowledge.evals.text.matches`). BM25 alone
and dense alone are the baselines beside hybrid.

    python -m evals.fact_recall --sites /tmp/sk [--reuse] [--site S ...] [--out REPORT.md]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evals.answer_sets import ANSWER_SETS, per_site_main
from site_knowledge.evals.dataset import Fact, Item, battery_path, load_items
from site_knowledge.evals.site import SiteIndex
from site_knowledge.evals.text import matches, normalise
from site_knowledge.retrieval import KnowledgeIndex

MODES = ("hybrid", "bm25", "dense")
TOP_K = 4
"""The gateway's evidence: `GatewayConfig.passages`."""


@dataclass(frozen=True)
class Recall:
    """One site and mode: items whose evidence holds every fact, or an expected page."""

    site: str
    mode: str
    items: int
    facts_held: int
    page_held: int
    refused: int
    """Items the gate refuses (no evidence at all)."""


def held(fact: Fact, texts: Sequence[str]) -> bool:
    """True when one of the (normalised) passage texts holds every part of the fact."""
    return any(all(any(matches(a, text) for a in alts) for alts in fact.parts) for text in texts)


def recall(index: KnowledgeIndex, site: SiteIndex, items: Sequence[Item], name: str,
           mode: str) -> Recall:
    """Search every item with facts in ``mode`` and count what its evidence holds."""
    facts = pages = refused = 0
    asked = [item for item in items if item.facts]
    for item in asked:
        found = index.search(item.question, [e.question for e in item.history], mode, TOP_K)
        if not found.answerable:
            refused += 1
            continue
        texts = [normalise(hit.passage.text) for hit in found.hits]
        facts += all(held(fact, texts) for fact in item.facts)
        pages += site.matches(frozenset(hit.source.id for hit in found.hits), item.sources)
    return Recall(name, mode, len(asked), facts, pages, refused)


def measure(site_dir: Path, name: str) -> list[Recall]:
    """Every mode on one built site with its answer set."""
    site = SiteIndex.load(site_dir)
    items = load_items(ANSWER_SETS[name].battery or battery_path())
    return [recall(site.index, site, items, name, mode) for mode in MODES]


def table(rows: Sequence[Recall]) -> str:
    """Markdown: per site, hybrid with BM25 and dense beside."""
    by_site: dict[str, dict[str, Recall]] = {}
    for row in rows:
        by_site.setdefault(row.site, {})[row.mode] = row
    lines = ["| site | items | all facts in the evidence: hybrid (BM25 / dense) | an expected page: "
             "hybrid (BM25 / dense) | refused by the gate |", "|---|---:|---|---|---:|"]
    for site, modes in by_site.items():
        hybrid = modes["hybrid"]
        lines.append(
            f"| {site} | {hybrid.items} | {_share(hybrid.facts_held, hybrid.items)} "
            f"({modes['bm25'].facts_held} / {modes['dense'].facts_held}) | "
            f"{_share(hybrid.page_held, hybrid.items)} "
            f"({modes['bm25'].page_held} / {modes['dense'].page_held}) | {hybrid.refused} |")
    return "\n".join(lines)


def _share(count: int, items: int) -> str:
    return f"{count}/{items} ({100 * count / items:.0f}%)"


def main(argv: Sequence[str] | None = None) -> int:
    """Build (or reuse) the sites, measure each answer set, print the table."""
    return per_site_main(__doc__ or "", measure, table, argv)


if __name__ == "__main__":
    raise SystemExit(main())
