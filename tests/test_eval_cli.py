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
