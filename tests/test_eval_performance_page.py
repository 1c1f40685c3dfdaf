"""evals/performance_page.py: the committed docs/performance.md is what the reports give now,
each table holds the newest report of its kind, and a malformed report is named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evals import performance_page
from evals.performance_page import PAGE, REPORTS, ReportError, render

ANSWERS = "battery-answers-netbox-qwen2.5-coder-1.5b-2026-12-05.json"
RETRIEVAL = "retrieval-netbox.json"


def _copy(tmp_path: Path, *names: str) -> None:
    for name in names:
        shutil.copy(REPORTS / name, tmp_path / name)


def test_the_committed_page_is_what_the_reports_give_now() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(REPORTS), (
        "docs/performance.md is stale: run .venv/bin/python -m evals.performance_page")


def test_check_says_whether_the_page_is_current(tmp_path: Path) -> None:
    _copy(tmp_path, ANSWERS)
    page = tmp_path / "performance.md"
    assert performance_page.main(["--reports", str(tmp_path), "--out", str(page), "--check"]) == 1
    assert performance_page.main(["--reports", str(tmp_path), "--out", str(page)]) == 0
    assert performance_page.main(["--reports", str(tmp_path), "--out", str(page), "--check"]) == 0


def test_a_table_holds_the_newest_report_of_a_kind_and_names_its_file(tmp_path: Path) -> None:
    _copy(tmp_path, ANSWERS)
    older = json.loads((REPORTS / ANSWERS).read_text(encoding="utf-8"))
    older["date"] = "2026-11-01T00:00:00Z"
    older["summary"]["percent"] = 12.0
    (tmp_path / "battery-answers-netbox-older.json").write_text(json.dumps(older), "utf-8")
    page = render(tmp_path)
    assert f"`evals/reports/{ANSWERS.removesuffix('.json')}.md` (2026-12-05;" in page
    assert "battery-answers-netbox-older" not in page
    assert "| netbox | 64 | 63% (22% / 10%) |" in page
    assert "| netbox | 64 | 12% " not in page


@pytest.mark.parametrize(("name", "edit", "field"), [
    (ANSWERS, lambda doc: doc["summary"].pop("percent"), "summary.percent"),
    (ANSWERS, lambda doc: doc.pop("date"), "date"),
    (RETRIEVAL, lambda doc: doc["summary"]["gate"].pop("gated"), "summary.gate.gated"),
])
def test_a_report_without_a_field_the_page_reads_is_named(tmp_path: Path, name, edit, field) -> None:
    doc = json.loads((REPORTS / name).read_text(encoding="utf-8"))
    edit(doc)
    (tmp_path / name).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ReportError, match=rf"{name}: a \w+ report needs '{field}'"):
        render(tmp_path)


def test_a_report_that_is_not_json_is_named(tmp_path: Path) -> None:
    (tmp_path / "battery-broken.json").write_text('{"kind": "battery",', encoding="utf-8")
    with pytest.raises(ReportError, match=r"battery-broken\.json: not a JSON report"):
        render(tmp_path)


def test_a_benchmark_report_is_quoted_by_its_first_table_newest_first(tmp_path: Path) -> None:
    (tmp_path / "build-scale-2026-11-01.md").write_text(
        "# Old\n\n| pages | x |\n|---|---|\n| 10 | old |\n", encoding="utf-8")
    (tmp_path / "build-scale-2026-12-01.md").write_text(
        "# New\n\nText.\n\n| pages | x |\n|---|---|\n| 20 | new |\n\nMore.\n\n| other |\n",
        encoding="utf-8")
    page = render(tmp_path)
    assert "| 20 | new |\n\nReport: `evals/reports/build-scale-2026-12-01.md`." in page
    assert "| 10 | old |" not in page and "| other |" not in page


def test_a_benchmark_report_without_a_table_is_named(tmp_path: Path) -> None:
    (tmp_path / "shards-2026-12-01.md").write_text("# Shards\n\nNo table.\n", encoding="utf-8")
    with pytest.raises(ReportError, match=r"shards-2026-12-01\.md: a benchmark report needs"):
        render(tmp_path)
