"""The gate check (evals/gate_check.py) on the session's real build of the example site with
the current battery."""

from __future__ import annotations

from pathlib import Path

import pytest
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
    found = gate_check.open_gate(site.index).search(question)
    assert found.answerable and len(found.hits) == 4
    assert not site.index.search(question).answerable, "the site's own gate is untouched"


def test_the_command_line_writes_the_table_of_a_reused_site(
        example_site: BuiltSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "example").symlink_to(example_site.site_dir)
    out = tmp_path / "gate.md"
    assert gate_check.main(["--sites", str(tmp_path / "sites"), "--reuse", "--site", "example",
                            "--out", str(out)]) == 0
    written = out.read_text(encoding="utf-8")
    assert written == capsys.readouterr().out
    assert written.splitlines()[2].startswith("| example | ")


def test_the_command_line_needs_a_sites_folder(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        gate_check.main(["--site", "example"])
    assert "--sites DIR is required" in capsys.readouterr().err
