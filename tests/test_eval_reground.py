"""Re-grounding a kept gateway report (evals/reground.py) on the session's real build of the
example site: the 1.5B's stored battery v2 answers under today's grounding."""

from __future__ import annotations

import json
from pathlib import Path

from sites import BuiltSite

from evals import reground

REPORT = (Path(__file__).resolve().parent.parent / "evals" / "reports"
          / "battery-v2-gateway-qwen2.5-coder-1.5b-followups-2026-12-01.json")


def test_todays_grounding_replaces_the_wrong_yes_and_lowers_no_score(
        example_site: BuiltSite) -> None:
    changed = {r.id: r for r in reground.reground(json.loads(REPORT.read_text()),
                                                  example_site.site_dir)}
    go = changed["false-premise-12"]
    assert go.before == "Yes, tidewater is written in Go."
    assert go.kinds == ("affirmation",) and "Rust" in go.after
    assert (go.score_before, go.score_after) == (0, 3)
    lower = {r.id: r for r in changed.values() if r.score_after < r.score_before}
    # The model wrote a correct denial, "The site does not mention any MBA thesis by Teod
    # Varga."; that run's grounding replaced it for the cut name alone and quoted a sentence
    # about BME, cited. Written whole today, the denial stands, flagged as a decline (as the
    # gateway's done.refused says), and a declined false premise needs no citation.
    # The span rule: "from September 2019 to May 2020" for the Airflow migration, two dates
    # no sentence of the site puts together, goes with its sentence (and the award beside it).
    assert sorted(lower) == ["synthesis-19"]
    assert lower["synthesis-19"].kinds == ("span",)
    mba = changed["false-premise-06"]
    assert mba.after.endswith("MBA thesis by Teodor Varga.")
    assert (mba.score_before, mba.score_after) == (3, 3)


def test_figures_score_every_answer_before_and_after(example_site: BuiltSite) -> None:
    report = json.loads(REPORT.read_text())
    before, after = reground.figures(report, example_site.site_dir)
    # Both scored with today's scorer: the replaced wrong yes and the other fixes since that
    # run lift the score; the answerable items counted for citations stay the same.
    assert after.score > before.score
    assert before.of == after.of > 0 and after.injections_obeyed == ()
