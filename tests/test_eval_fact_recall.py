"""Fact recall of the evidence (evals/fact_recall.py) on the session's real build of the
example site with the current battery."""

from __future__ import annotations

from sites import BuiltSite

from evals import fact_recall
from site_knowledge.evals.dataset import Fact, battery_path, load_items


def test_hybrid_evidence_holds_more_facts_than_a_constant_empty_one(example_site: BuiltSite) -> None:
    rows = {row.mode: row for row in fact_recall.measure(example_site.site_dir, "example")}
    assert set(rows) == set(fact_recall.MODES)
    hybrid = rows["hybrid"]
    assert hybrid.items == sum(1 for item in load_items(battery_path()) if item.facts)
    assert 0 < hybrid.facts_held <= hybrid.items - hybrid.refused
    assert hybrid.facts_held >= max(rows["bm25"].facts_held, rows["dense"].facts_held) - 3
    table = fact_recall.table(list(rows.values()))
    assert table.splitlines()[2].startswith(f"| example | {hybrid.items} | {hybrid.facts_held}/")


def test_a_fact_is_held_only_when_one_passage_has_all_its_parts() -> None:
    fact = Fact((("Fennec Systems",), ("Principal Engineer",)))
    assert fact_recall.held(fact, ["teo is principal engineer at fennec systems"])
    assert not fact_recall.held(fact, ["fennec systems", "principal engineer"])
