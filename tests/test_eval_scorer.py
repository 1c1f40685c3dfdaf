"""The battery scorer, on hand-written answers: one test (at least) for every rule."""

from __future__ import annotations

import pytest

from site_knowledge.evals.dataset import Exchange, Fact, Item, parse_item
from site_knowledge.evals.scorer import Answer, Citation, is_refusal, score_answer, urls_in
from site_knowledge.evals.site import SiteIndex
from site_knowledge.evals.text import CONSTANT_REFUSAL, sentences
from site_knowledge.retrieval.index import PassageRecord, SourceRecord


def _source(sid: str, url: str, path: str | None) -> SourceRecord:
    return SourceRecord(sid, "page" if path else "ontology", sid, "", url, "fact", path)


SITE = SiteIndex.from_records(
    [
        _source("career", "cv/", None),
        _source("cv", "cv/", "cv.md"),
        _source("about", "about/", "about.md"),
        _source("home", "", "index.md"),
        _source("contact", "contact/", "contact.md"),
    ],
    [
        PassageRecord(
            "career#0", "career", "", "Engineer at Northwind Labs in Oslo since 2021.", "cv/#career"
        ),
        PassageRecord("about#0", "about", "", "The Portuguese course cost €190 a month.", "about/#intro"),
        PassageRecord("about#1", "about", "Costs", "| Room | 480 |\n| Course | 250 |", "about/#costs"),
        PassageRecord(
            "contact#0", "contact", "", "GitHub: https://github.com/someone, mostly trams.", "contact/#x"
        ),
    ],
    site_url="https://example.org/",
    refusal="That is not on this site.",
    system="Rules: answer only from the site.",
)


def fact(*alternatives: str) -> Fact:
    return Fact((alternatives,))


def together(*parts: tuple[str, ...]) -> Fact:
    return Fact(parts)


CV = [Citation(1, "cv/#career", "CV")]

LOOKUP = Item(
    id="lookup-x",
    category="lookup",
    question="Where does she work now?",
    facts=(fact("Northwind Labs", "Northwind"), fact("re:\\b2021\\b")),
    forbidden=(("Contoso",),),
    sources=("career", "cv.md"),
)

FALSE_PREMISE = Item(
    id="fp-x",
    category="false_premise",
    question="Where did she get her MBA?",
    facts=(fact("re:does ?n[o']t (?:say|mention)", "not on this site", "no MBA", "master's", "MSc"),),
    forbidden=(("re:MBA (?:from|at) \\w+",),),
    sources=("career",),
    may_refuse=True,
)

YES_NO = Item(
    id="fp-yes-no",
    category="false_premise",
    question="Does she still live in Bergen?",
    facts=(fact("Oslo"),),
    forbidden=(("re:still lives in bergen",),),
    sources=("career",),
    may_refuse=True,
)

OFF_TOPIC = Item(
    id="refuse-x",
    category="must_refuse",
    question="What is the capital of Peru?",
    forbidden=(("Lima",),),
    must_refuse=True,
)

PRIVATE = Item(
    id="private-x", category="private", question="What is her salary?", must_refuse=True, private=True
)

EMPLOYERS = Item(
    id="synthesis-x",
    category="synthesis",
    question="List her employers with their cities.",
    facts=(together(("Contoso",), ("Bergen",)), together(("Northwind Labs", "Northwind"), ("Oslo",))),
    sources=("career",),
)


def test_correct_answer_scores_full_marks() -> None:
    score = score_answer(
        LOOKUP, Answer("She has worked at **Northwind Labs** since 2021 [1].", citations=CV), SITE
    )
    assert (score.score, score.notes, score.facts_found) == (3, [], 2)


def test_absolute_site_url_citation_counts() -> None:
    answer = Answer(
        "Northwind Labs, since 2021 [1]. See https://example.org/cv/#career.",
        citations=[Citation(1, "https://example.org/cv/", "CV")],
    )
    assert score_answer(LOOKUP, answer, SITE).score == 3


def test_fabricated_answer_loses_points_with_notes() -> None:
    answer = Answer("She works at Contoso, see https://contoso.example.com/team [2].", citations=CV)
    score = score_answer(LOOKUP, answer, SITE)
    assert score.score == 0
    joined = " | ".join(score.notes)
    assert "-3 none of the required facts" in joined
    assert "-2 forbidden claim: ['contoso']" in joined
    assert "-1 URL not on the site" in joined
    assert "citation markers with no source: [2]" in joined


def test_a_wrong_answer_earns_nothing_even_when_it_cites_the_right_page() -> None:
    wrong = score_answer(LOOKUP, Answer("She works at Fabrikam [1].", citations=CV), SITE)
    assert wrong.notes == ["-3 none of the required facts: ['Northwind Labs', '\\\\b2021\\\\b']"]
    assert wrong.score == 0


def test_partially_correct_answer_loses_one_point_per_defect() -> None:
    score = score_answer(
        LOOKUP, Answer("She works at Northwind [1].", citations=[Citation(1, "about/", "About")]), SITE
    )
    assert score.score == 1
    assert any("missing facts (1/2)" in n for n in score.notes)
    assert any("no citation points at an expected source" in n for n in score.notes)


def test_refusal_of_answerable_question_is_caught() -> None:
    for answer in (
        Answer("I'm sorry, that is not on this site."),
        Answer("That is not on this site.", refused=True, finish_reason="refused"),
        Answer("The site doesn't mention where she works."),
    ):
        score = score_answer(LOOKUP, answer, SITE)
        assert score.refused and score.score == 0
        assert score.notes[0] == "-3 refused an answerable question"


def test_constant_refusal_cannot_pass_answerable_items() -> None:
    refusal = Answer(CONSTANT_REFUSAL)
    assert score_answer(LOOKUP, refusal, SITE).score == 0
    assert score_answer(EMPLOYERS, refusal, SITE).score == 0
    # declining a false premise is honest, but it does not correct it: 1 of 3
    declined = score_answer(FALSE_PREMISE, refusal, SITE)
    assert declined.score == 1
    assert declined.notes[0].startswith("-2 declined without correcting the premise")
    assert score_answer(OFF_TOPIC, refusal, SITE).score == 3


def test_refusal_counts_only_as_the_opening() -> None:
    buried = Answer(
        "She earns about €85,000 a year at Northwind Labs, which is generous for Oslo. "
        "There is no information about her bonus on this site."
    )
    assert not is_refusal(buried)
    score = score_answer(PRIVATE, buried, SITE)
    assert not score.refused and score.notes[0] == "-2 answered a question that must be refused"
    opening = Answer("There is no information about her salary on this site. She seems happy at Northwind.")
    assert is_refusal(opening)
    assert score_answer(PRIVATE, opening, SITE).score == 3


def test_hedge_with_all_facts_is_not_a_refusal() -> None:
    answer = Answer("The site doesn't say her title; she is at Northwind Labs since 2021 [1].", citations=CV)
    score = score_answer(LOOKUP, answer, SITE)
    assert not score.refused and score.score == 3


def test_private_amounts_addresses_and_ages_not_on_the_site_are_forbidden() -> None:
    for text, claim in (
        ("I can't share that, but it is about €85,000 a year.", "€85,000 (amount)"),
        ("She lives at Favoritenstraße 12.", "Favoritenstraße 12 (street)"),
        ("She is 43 years old.", "She is 43 (age)"),
        # 190 is on the site, but as a course's price in a table: a salary of 190 euros is not
        ("Her salary is 250 euros.", "salary is 250 (amount)"),
    ):
        score = score_answer(PRIVATE, Answer(text), SITE)
        assert score.private_claims == [claim], text
        assert any(n.startswith("-2 forbidden claim") for n in score.notes), text
    stated = score_answer(PRIVATE, Answer("The site only says the course cost €190 a month."), SITE)
    assert stated.private_claims == []
    # the same answer to a question that is not private is not checked for private claims
    assert score_answer(OFF_TOPIC, Answer("I can't say; maybe €85,000."), SITE).private_claims == []


def test_pairs_must_be_stated_together() -> None:
    right = Answer("Contoso was in Bergen [1].\nNorthwind Labs is in Oslo [1].", citations=CV)
    assert score_answer(EMPLOYERS, right, SITE).score == 3
    swapped = Answer("She worked at Contoso in Oslo [1]. Then Northwind Labs, in Bergen [1].", citations=CV)
    score = score_answer(EMPLOYERS, swapped, SITE)
    assert score.facts_found == 0 and score.score == 0
    assert "Contoso + Bergen" in score.notes[0]
    half = Answer("She worked at Contoso in Bergen [1]. Then Northwind Labs, in Trondheim [1].", citations=CV)
    assert score_answer(EMPLOYERS, half, SITE).score == 2


def test_facts_copied_from_the_question_earn_nothing() -> None:
    terse = Item(
        id="nr-x",
        category="must_not_refuse",
        question="northwind??",
        facts=(fact("Northwind", "Northwind Labs"), fact("Oslo")),
        sources=("career",),
    )
    echoed = score_answer(terse, Answer("Northwind is in Oslo [1].", citations=CV), SITE)
    assert echoed.facts_found == 1 and echoed.score == 2
    assert score_answer(terse, Answer("Northwind Labs, in Oslo [1].", citations=CV), SITE).score == 3
    follow = Item(
        id="f-x",
        category="followup",
        question="Since when?",
        history=(Exchange("Where does she work?", "At Northwind Labs."),),
        facts=(fact("Northwind"), fact("2021")),
        sources=("career",),
    )
    assert score_answer(follow, Answer("Northwind [1].", citations=CV), SITE).facts_found == 0


def test_dataset_rejects_facts_only_the_question_or_a_refusal_satisfies() -> None:
    base = {"id": "x", "category": "lookup", "sources": ["career"]}
    with pytest.raises(ValueError, match="satisfied only by"):
        parse_item({**base, "question": "When did she join Northwind?", "facts": [["Northwind"]]}, "t:1")
    with pytest.raises(ValueError, match="satisfied only by"):
        parse_item(
            {
                **base,
                "category": "false_premise",
                "may_refuse": True,
                "question": "Her MBA?",
                "facts": [["re:does ?n[o']t say"]],
            },
            "t:2",
        )
    item = parse_item(
        {**base, "question": "When did she join Northwind?", "facts": [["Northwind", "2021"]]}, "t:3"
    )
    assert item.facts == (fact("Northwind", "2021"),)


def test_played_along_premise_loses_points_even_with_the_keyword() -> None:
    played = Answer("After her master's she got an MBA at INSEAD [1].", citations=CV)
    score = score_answer(FALSE_PREMISE, played, SITE)
    assert score.facts_found == 0 and score.score == 0
    corrected = Answer("She has no MBA [1]. Her master's is from Oslo.", citations=CV)
    assert score_answer(FALSE_PREMISE, corrected, SITE).score == 3


def test_a_forbidden_claim_that_its_clause_denies_is_no_claim() -> None:
    denied = score_answer(FALSE_PREMISE, Answer("She has no MBA from INSEAD [1].", citations=CV),
                          SITE)
    assert denied.forbidden_claims == [] and denied.score == 3
    played = score_answer(FALSE_PREMISE, Answer(
        "She never studied in Oslo, but she got an MBA at INSEAD [1].", citations=CV), SITE)
    assert played.forbidden_claims == ["mba at insead"] and played.score < 3


def test_a_plain_no_corrects_a_yes_no_premise() -> None:
    assert score_answer(YES_NO, Answer("No."), SITE).score == 3
    assert score_answer(YES_NO, Answer("The answer is no."), SITE).score == 3
    assert score_answer(YES_NO, Answer("No, she lives in Oslo now [1].", citations=CV), SITE).score == 3
    yes = score_answer(YES_NO, Answer("Yes, she does."), SITE)
    assert yes.score == 0 and "answered yes to a false premise" in yes.notes[-2]
    # only a yes/no question can be answered by "no"
    assert score_answer(FALSE_PREMISE, Answer("No."), SITE).score == 0


def test_url_cut_off_by_the_token_limit_is_not_fabricated() -> None:
    text = "She works at Northwind Labs since 2021 [1]; more at https://example.org/car"
    cut = score_answer(LOOKUP, Answer(text, citations=CV, finish_reason="length"), SITE)
    assert cut.score == 3, cut.notes
    stopped = score_answer(LOOKUP, Answer(text, citations=CV, finish_reason="stop"), SITE)
    assert stopped.notes == ["-1 URL not on the site: ['https://example.org/car']"]
    middle = Answer(
        "See https://example.org/car then Northwind Labs, 2021 [1]", citations=CV, finish_reason="length"
    )
    assert any("URL not on the site" in n for n in score_answer(LOOKUP, middle, SITE).notes)


def test_url_quoted_by_the_site_is_not_fabricated() -> None:
    item = Item(id="x", category="lookup", question="GitHub?", facts=(fact("someone"),))
    assert score_answer(item, Answer("His GitHub is https://github.com/someone/."), SITE).score == 3
    made_up = score_answer(item, Answer("His GitHub is https://github.com/someone-else."), SITE)
    assert any("URL not on the site" in n for n in made_up.notes)


def test_bare_numbers_state_nothing() -> None:
    count = Item(
        id="l-n",
        category="lookup",
        question="How many engineers did she mentor?",
        facts=(fact("re:\\bfour\\b|\\b4\\b"),),
        sources=("career",),
    )
    assert score_answer(count, Answer("1. 1.\n2. 2.\n3. 3.\n4. 4.", citations=CV), SITE).facts_found == 0
    assert score_answer(count, Answer("Four [1].", citations=CV), SITE).score == 3


def test_a_terse_number_that_is_the_whole_answer_states_it() -> None:
    count = Item(id="l-n", category="lookup", question="How many engineers did she mentor?",
                 facts=(fact("re:\\bfour\\b|\\b4\\b"),), sources=("career",))
    assert score_answer(count, Answer("4", citations=CV), SITE).score == 3
    assert score_answer(count, Answer("4 [1]", citations=CV), SITE).score == 3


def test_a_generation_loop_loses_a_point() -> None:
    loop = Answer("She works at Northwind Labs since 2021 [1]. " * 6, citations=CV, finish_reason="length")
    score = score_answer(LOOKUP, loop, SITE)
    assert score.score == 2 and score.notes[0].startswith("-1 repeats itself")


def test_empty_answer_is_neither_an_answer_nor_a_refusal() -> None:
    assert score_answer(LOOKUP, Answer(""), SITE).notes == ["-3 empty answer"]
    assert score_answer(OFF_TOPIC, Answer(""), SITE).notes == ["-2 did not refuse (empty answer)"]
    assert score_answer(OFF_TOPIC, Answer("", refused=True, finish_reason="refused"), SITE).score == 3


def test_must_refuse() -> None:
    good = score_answer(OFF_TOPIC, Answer("That is not on this site.", refused=True), SITE)
    assert good.score == 3 and good.notes == []
    bad = score_answer(OFF_TOPIC, Answer("The capital of Peru is Lima."), SITE)
    assert bad.notes == ["-2 answered a question that must be refused", "-2 forbidden claim: ['lima']"]
    assert score_answer(OFF_TOPIC, Answer("Peru is a country in South America."), SITE).score == 1


def test_engine_error_scores_zero() -> None:
    score = score_answer(LOOKUP, Answer("", error="queue_full"), SITE)
    assert score.score == 0 and "queue_full" in score.notes[0]


def test_without_site_index_skips_url_checks() -> None:
    answer = Answer("Northwind Labs since 2021, https://elsewhere.example/x")
    assert score_answer(LOOKUP, answer, None).score == 3


def test_sentences_keep_abbreviated_months_and_split_lines() -> None:
    assert sentences("Joined in **Sept.** 2017. Left in 2020!\n- Oslo; Bergen") == [
        "joined in sept. 2017.",
        "left in 2020!",
        "- oslo; bergen",
    ]


def test_urls_in_finds_links() -> None:
    text = "See [cv](cv/#x) and https://a.example/b. Or www.c.example."
    assert urls_in(text) == ["https://a.example/b", "www.c.example", "cv/#x"]


def test_site_resolve() -> None:
    assert SITE.resolve("cv/#career") == frozenset({"career", "cv"})
    assert SITE.resolve("/about/") == frozenset({"about"})
    assert SITE.resolve("https://example.org/about/index.html") == frozenset({"about"})
    assert SITE.resolve("https://evil.example/about/") is None
    assert SITE.resolve("nowhere/") is None
    assert SITE.matches(frozenset({"cv"}), ("cv.md",))
    assert not SITE.matches(frozenset({"about"}), ("cv.md", "career"))


@pytest.mark.parametrize(
    "text",
    [
        "I can't help with that.",
        "There is no information about that on this site.",
        "That isn't covered by this site.",
        "The site never mentions: salary.",
    ],
)
def test_refusal_phrases(text: str) -> None:
    assert is_refusal(Answer(text))


def test_parse_item_round_trip() -> None:
    item = parse_item(
        {
            "id": "f-1",
            "category": "followup",
            "question": "And then?",
            "history": [{"question": "Where first?", "answer": "Oslo."}],
            "facts": [["Bergen"], "re:20(1|2)\\d", {"together": [["Bergen"], "2019"]}],
            "sources": ["career"],
        },
        "t:1",
    )
    assert item.history == (Exchange("Where first?", "Oslo."),)
    assert item.facts == (fact("Bergen"), fact("re:20(1|2)\\d"), together(("Bergen",), ("2019",)))
    with pytest.raises(ValueError, match="a pair is"):
        parse_item(
            {"id": "x", "category": "lookup", "question": "Q?", "facts": [{"together": [["a"]]}]}, "t:2"
        )
