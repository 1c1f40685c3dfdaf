"""The battery scorer, on hand-written answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.artifact import SiteIndex
from evals.dataset import Exchange, Item, parse_item
from evals.scorer import Answer, Citation, is_refusal, score_answer, urls_in

SITE = SiteIndex.from_data(
    {
        "site": {"url": "https://example.org/"},
        "prompt": {"refusal": "That is not on this site."},
        "sources": [
            {"id": "career", "kind": "ontology", "url": "cv/", "path": None},
            {"id": "cv", "kind": "page", "url": "cv/", "path": "cv.md"},
            {"id": "about", "kind": "page", "url": "about/", "path": "about.md"},
            {"id": "home", "kind": "page", "url": "", "path": "index.md"},
        ],
        "passages": [
            {"id": "career#0", "source": "career", "url": "cv/#career"},
            {"id": "about#0", "source": "about", "url": "about/#intro"},
        ],
    },
    Path("site-knowledge.json"),
    "0" * 64,
)

LOOKUP = Item(
    id="lookup-x",
    category="lookup",
    question="Where does she work now?",
    facts=(("Northwind Labs", "Northwind"), ("re:\\b2021\\b",)),
    forbidden=(("Contoso",),),
    sources=("career", "cv.md"),
)

FALSE_PREMISE = Item(
    id="fp-x",
    category="false_premise",
    question="Where did she get her MBA?",
    facts=(("no MBA", "doesn't have an MBA", "does not have an MBA", "not on this site"),),
    forbidden=(("re:MBA (?:from|at) \\w+",),),
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


def test_correct_answer_scores_full_marks() -> None:
    answer = Answer(
        "She has worked at **Northwind Labs** since 2021 [1].",
        citations=[Citation(1, "cv/#career", "CV")],
    )
    score = score_answer(LOOKUP, answer, SITE)
    assert score.score == 3, score.notes
    assert score.notes == []
    assert score.facts_found == 2


def test_absolute_site_url_citation_counts() -> None:
    answer = Answer(
        "Northwind Labs, since 2021 [1]. See https://example.org/cv/#career.",
        citations=[Citation(1, "https://example.org/cv/", "CV")],
    )
    assert score_answer(LOOKUP, answer, SITE).score == 3


def test_fabricated_answer_loses_points_with_notes() -> None:
    answer = Answer(
        "She works at Contoso, see https://contoso.example.com/team [2].",
        citations=[Citation(1, "cv/", "CV")],
    )
    score = score_answer(LOOKUP, answer, SITE)
    assert score.score == 0
    joined = " | ".join(score.notes)
    assert "-2 missing facts" in joined
    assert "-2 forbidden claim: ['contoso']" in joined
    assert "-1 URL not on the site" in joined
    assert "[2]" not in joined or "no source" in joined
    assert "citation markers with no source: [2]" in joined


def test_partially_correct_answer_loses_one_point() -> None:
    answer = Answer("She works at Northwind [1].", citations=[Citation(1, "about/", "About")])
    score = score_answer(LOOKUP, answer, SITE)
    # one of two facts missing (-1) and the only citation is not an expected source (-1)
    assert score.score == 1
    assert any("missing facts (1/2)" in n for n in score.notes)
    assert any("no citation points at an expected source" in n for n in score.notes)


def test_refusal_of_answerable_question_is_caught() -> None:
    for answer in (
        Answer("I'm sorry, that is not on this site."),
        Answer("That is not on this site.", refused=True, finish_reason="refused"),
        Answer("The site doesn't mention where she works."),
        Answer(""),
    ):
        score = score_answer(LOOKUP, answer, SITE)
        assert score.refused
        assert score.score == 0
        assert score.notes[0] == "-3 refused an answerable question"


def test_hedge_with_all_facts_is_not_a_refusal() -> None:
    answer = Answer(
        "Northwind Labs since 2021 [1]; her exact title is not mentioned.",
        citations=[Citation(1, "cv/", "CV")],
    )
    score = score_answer(LOOKUP, answer, SITE)
    assert not score.refused and score.score == 3


def test_must_refuse() -> None:
    good = score_answer(OFF_TOPIC, Answer("That is not on this site.", refused=True), SITE)
    assert good.score == 3 and good.notes == []
    bad = score_answer(OFF_TOPIC, Answer("The capital of Peru is Lima."), SITE)
    assert bad.score == 0
    assert bad.notes == [
        "-2 answered a question that must be refused",
        "-2 forbidden claim: ['lima']",
    ]
    vague = score_answer(OFF_TOPIC, Answer("Peru is a country in South America."), SITE)
    assert vague.score == 1


def test_false_premise_correction_or_refusal() -> None:
    corrected = Answer(
        "She doesn't have an MBA; her CV lists no such degree [1].",
        citations=[Citation(1, "cv/", "CV")],
    )
    assert score_answer(FALSE_PREMISE, corrected, SITE).score == 3
    declined = score_answer(FALSE_PREMISE, Answer("That is not on this site.", refused=True), SITE)
    assert declined.score == 3
    fabricated = score_answer(
        FALSE_PREMISE,
        Answer("She got her MBA at Wharton in 2015 [1].", citations=[Citation(1, "cv/", "CV")]),
        SITE,
    )
    assert fabricated.score == 0
    assert any("forbidden claim" in n for n in fabricated.notes)


def test_engine_error_scores_zero() -> None:
    score = score_answer(LOOKUP, Answer("", error="queue_full"), SITE)
    assert score.score == 0 and "queue_full" in score.notes[0]


def test_without_site_index_skips_url_checks() -> None:
    answer = Answer("Northwind Labs since 2021, https://elsewhere.example/x")
    assert score_answer(LOOKUP, answer, None).score == 3


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
            "facts": [["Bergen"], "re:20(1|2)\\d"],
            "sources": ["career"],
        },
        "t:1",
    )
    assert item.history == (Exchange("Where first?", "Oslo."),)
    assert item.facts == (("Bergen",), ("re:20(1|2)\\d",))


def test_url_quoted_by_the_site_is_not_fabricated() -> None:
    site = SiteIndex.from_data(
        {
            "site": {"url": "https://example.org/"},
            "sources": [{"id": "contact", "url": "contact/", "path": "contact.md"}],
            "passages": [
                {
                    "id": "contact#0",
                    "source": "contact",
                    "url": "contact/#elsewhere",
                    "text": "GitHub: https://github.com/someone, mostly trams.",
                },
            ],
        },
        Path("a.json"),
        "0" * 64,
    )
    item = Item(id="x", category="lookup", question="GitHub?", facts=(("github",),))
    quoted = Answer("His GitHub is https://github.com/someone/.")
    assert score_answer(item, quoted, site).score == 3
    made_up = Answer("His GitHub is https://github.com/someone-else.")
    assert any("URL not on the site" in n for n in score_answer(item, made_up, site).notes)
