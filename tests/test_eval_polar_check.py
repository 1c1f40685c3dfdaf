"""The yes-check measurement (evals/polar_check.py) on the session's real build of the example
site, with items whose outcome the example's pages settle."""

from __future__ import annotations

from sites import BuiltSite

from evals import polar_check
from evals.polar_check import Polar


def test_the_question_file_covers_every_site_with_both_answers() -> None:
    items = polar_check.load()
    assert {(i.site, i.yes) for i in items} == {(s, y) for s in
                                                ("example", "netbox", "drf-docs",
                                                 "evaluationcontext-blog") for y in (True, False)}
    assert all(i.quote and i.question.endswith("?") for i in items)


def test_a_restatement_is_the_question_as_a_statement() -> None:
    assert polar_check.restatement("Is tidewater written in Go?") == "tidewater written in Go."
    assert polar_check.restatement("Does Teo speak Dutch?") == "Teo speak Dutch."


def test_the_check_stops_a_wrong_yes_and_passes_a_right_one(example_site: BuiltSite) -> None:
    items = [Polar("example", "Is tidewater written in Go?", False, "A Rust library"),
             Polar("example", "Is tidewater written in Rust?", True, "A Rust library")]
    wrong, right = polar_check.check_site(example_site.site_dir, items)
    assert wrong.stopped_yes and wrong.stopped_restatement
    assert not right.stopped_yes and not right.stopped_restatement
    assert right.quote_seen
    table = polar_check.table([wrong, right])
    assert "| example | 0/1 (restated: 0/1) | 0 | 1/1 (restated: 1/1) |" in table
    assert polar_check.details([wrong, right]) == ""
