"""Where declining answers' quotes point (evals/quote_check.py), on the session's real build
of the example site."""

from __future__ import annotations

from sites import BuiltSite

from evals import quote_check
from evals.retrieval_sets import SETS


def test_quotes_are_counted_against_the_evidence_and_cite_expected_pages(
        example_site: BuiltSite) -> None:
    battery = next(s for s in SETS if s.name == "battery-v2")
    counts = quote_check.check(battery, example_site.site_dir)
    assert counts.questions >= 70
    assert counts.quote_expected <= counts.evidence_expected <= counts.questions
    assert counts.decline_quote_expected <= counts.declines_quoted <= counts.questions
    assert counts.quote_expected >= 0.8 * counts.evidence_expected, counts
    assert counts.unanswerable_passed > 0, "some questions the site cannot answer pass the gate"
    assert counts.unanswerable_quoted <= counts.unanswerable_passed
    row = quote_check.table([counts]).splitlines()[-1]
    assert row.startswith(f"| battery-v2 | {counts.questions} | {counts.evidence_expected} |")
