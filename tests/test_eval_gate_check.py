"""The gate check (evals/gate_check.py) on the session's real build of the example site with
the current battery."""

from __future__ import annotations

from sites import BuiltSite

from evals import gate_check
from site_knowledge.evals.dataset import battery_path, load_items
from site_knowledge.evals.site import SiteIndex


def test_refused_and_let_through_questions_are_the_gates_own_decisions(
        example_site: BuiltSite) -> None:
    site = SiteIndex.load(example_site.site_dir)
    items = load_items(battery_path())
    row = gate_check.check(site, items, "example")
    alone = [item for item in items if not item.history]
    assert row.answerable == sum(1 for item in alone if not item.must_refuse)
    assert row.unanswerable == len(alone) - row.answerable
    assert row.thresholds == {k: float(site.index.artifact["gate"][k]) for k in gate_check.OPEN}
    by_id = {item.id: item for item in items}
    for refused in row.refused:
        item = by_id[refused.id]
        assert not item.must_refuse and not item.history
        assert not site.index.search(item.question).answerable
    passed = [item for item in alone if item.must_refuse
              and site.index.search(item.question).answerable]
    assert len(row.passed_cosines) == len(passed)
    assert passed, "the battery's private questions pass the example's gate (the model declines)"
    lines = gate_check.table([row]).splitlines()
    assert lines[2].startswith(f"| example | {row.thresholds['min_coverage']:g} / ")
    assert f"| {len(row.refused)} of {row.answerable} |" in lines[2]
    assert sum(line.startswith("- example `") for line in lines) == len(row.refused)


def test_the_open_gate_accepts_word_salad(example_site: BuiltSite) -> None:
    site = SiteIndex.load(example_site.site_dir)
    question = "purple monkey dishwasher quantum lasagna"
    assert not site.index.search(question).answerable
    found = gate_check.open_gate(site).search(question)
    assert found.answerable and len(found.hits) == 4
