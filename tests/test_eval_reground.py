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
    assert all(r.score_after >= r.score_before for r in changed.values())
