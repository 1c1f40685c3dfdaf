"""The measurement of the affirmation checks (evals/affirmation_check.py) on the session's real
build of the example site, with items whose outcome the example's pages settle."""

from __future__ import annotations

from sites import BuiltSite

from evals import affirmation_check
from evals.affirmation_check import Polar, SiteReader
from site_knowledge.evals.dataset import battery_dir


def test_the_question_file_covers_every_site_with_both_answers() -> None:
    items = affirmation_check.load()
    assert {(i.site, i.yes) for i in items} == {(s, y) for s in
                                                ("example", "netbox", "drf-docs",
                                                 "evaluationcontext-blog") for y in (True, False)}
    assert all(i.quote and i.question.endswith("?") for i in items)


def test_a_restatement_is_the_question_as_a_statement() -> None:
    assert affirmation_check.restatement("Is tidewater written in Go?") == "tidewater written in Go."
    assert affirmation_check.restatement("Does Teo speak Dutch?") == "Teo speak Dutch."


def test_the_yes_check_stops_a_wrong_yes_and_passes_a_right_one(example_site: BuiltSite) -> None:
    items = [Polar("example", "Is tidewater written in Go?", False, "A Rust library"),
             Polar("example", "Is tidewater written in Rust?", True, "A Rust library")]
    wrong, right = affirmation_check.check_yeses(SiteReader(example_site.site_dir), items)
    assert wrong.stopped_yes and wrong.stopped_restatement
    assert not right.stopped_yes and not right.stopped_restatement
    assert right.quote_seen
    table = affirmation_check.yes_table([wrong, right])
    assert "| example | 0/1 (restated: 0/1) | 0 | 1/1 (restated: 1/1) |" in table
    assert affirmation_check.yes_details([wrong, right]) == ""


def test_premises_of_battery_v2_false_premises_only(example_site: BuiltSite) -> None:
    result = affirmation_check.check_premises(SiteReader(example_site.site_dir), "battery-v2",
                                              battery_dir() / "v2.jsonl")
    assert result.true_named > 0 and result.false_named > 0
    assert result.true_unconfirmed == []
    assert "Why did Teo move to Vienna in 2021?" in result.false_unconfirmed
    assert "| battery-v2 |" in affirmation_check.premise_table([result])
