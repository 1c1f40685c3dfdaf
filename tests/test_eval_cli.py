"""``site-knowledge eval`` from outside a checkout: the battery ships with the package."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sites import BuiltSite

from site_knowledge.cli import main


def test_a_baseline_run_from_any_folder_writes_its_report_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--engine", "constant-refusal", "--battery", "v1", "--only", "gibberish"]) == 0
    reports = sorted(tmp_path.glob("battery-v1-constant-refusal-*.json"))
    assert len(reports) == 1
    doc = json.loads(reports[0].read_text())
    assert doc["summary"]["score"] == 12 and doc["dataset"]["version"] == "v1"
    assert "score 12/12" in capsys.readouterr().out


@pytest.mark.slow
def test_engines_that_need_a_checkout_or_a_site_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_site: BuiltSite
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match="needs --site"):
        main(["eval", "--engine", "gate-only"])
    with pytest.raises(SystemExit, match="runs from a checkout of site-knowledge"):
        main(["eval", "--engine", "browser", "--site", str(example_site.site_dir)])


def test_a_missing_or_malformed_question_set_is_named(tmp_path: Path) -> None:
    missing = r"nope\.jsonl: no such file, nor a shipped battery version \(v1, v2\)"
    with pytest.raises(SystemExit, match=missing):
        main(["eval", "--retrieval", str(tmp_path), "--questions", "nope.jsonl"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "Where?", "expected": [], "kind": "lookup"}\n')
    with pytest.raises(SystemExit, match=r"^site-knowledge eval: bad\.jsonl:1: a lookup question must name"):
        main(["eval", "--retrieval", str(tmp_path), "--questions", str(bad)])


def test_rescore_keeps_the_run_identity_and_the_score_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--engine", "constant-refusal", "--battery", "v1", "--only", "lookup-01"]) == 0
    (path,) = tmp_path.glob("battery-v1-constant-refusal-*.json")
    doc = json.loads(path.read_text())
    doc["summary"]["score"] = 3  # as if an older scorer had given it full marks
    doc["artifact"]["sha256"] = "a" * 64
    path.write_text(json.dumps(doc))
    assert main(["eval", "--rescore", str(path), "--out", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / path.name).read_text())
    assert again["dataset"]["version"] == "v1"  # the report's own battery, not the current one
    assert again["summary"]["score"] == 0 and again["previous_score"] == {"score": 3, "max_score": 3}
    assert again["artifact"]["sha256"] == "a" * 64 and again["date"] == doc["date"]
