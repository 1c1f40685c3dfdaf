"""Grounding a finished answer against real evidence from the example site's artifact."""

from __future__ import annotations

import pytest

from site_knowledge.gateway.prompt import evidence_from_hits
from site_knowledge.grounding import Passage
from site_knowledge.grounding.answer import UNSUPPORTED
from site_knowledge.grounding.site import SiteGrounding
from site_knowledge.retrieval import KnowledgeIndex


@pytest.fixture(scope="module")
def grounding(example_site) -> SiteGrounding:
    return SiteGrounding(KnowledgeIndex.load(example_site.artifact_path))


def evidence_for(grounding: SiteGrounding, question: str) -> list[Passage]:
    hits = grounding.index.search(question, top_k=4).hits
    return [e.passage() for e in evidence_from_hits(list(hits))]


def ground_on_its_evidence(grounding: SiteGrounding, question: str, answer: str):
    """The answer grounded on the evidence the gateway would give for the question."""
    return grounding.ground(answer, question, evidence_for(grounding, question))


def test_a_supported_answer_without_markers_is_cited_and_unchanged(grounding):
    question = "What is tidewater?"
    evidence = evidence_for(grounding, question)
    answer = "Tidewater is a Rust library for downsampling time series that keeps each bucket's " \
             "minimum and maximum."
    result = grounding.ground(answer, question, evidence)
    assert result.text == answer and not result.changed and result.grounded
    assert result.declined is None, "an answer is not a refusal"
    assert result.cited, "a supported sentence is attributed to the passage holding its words"
    assert any("tidewater" in evidence[n - 1].text.lower() for n in result.cited)


def test_an_invented_amount_is_removed_and_the_answer_says_what_the_site_states(grounding):
    question = "What is Teo's salary?"
    evidence = evidence_for(grounding, question)
    result = grounding.ground("Teo earns 190 euros a month.", question, evidence)
    assert result.changed and not result.grounded
    assert "190" not in result.text
    assert result.text.startswith(UNSUPPORTED + " The closest it comes: ")
    assert result.declined == "unsupported", "a replaced answer is a refusal"
    quoted = result.cited[0]
    assert result.text.endswith(f"[{quoted}]") and not evidence[quoted - 1].fiction
    assert [c.text for c in result.removed] == ["190"]


def test_fiction_supports_no_claim_and_is_never_quoted(grounding):
    question = "Does Teo still play second bassoon in the Graz orchestra?"
    lore = next(p for p in grounding.index.passages
                if p.source_id == "lore" and "bassoon" in p.text)
    evidence = [*evidence_for(grounding, question)[:3], Passage("Lore", lore.text, fiction=True)]
    result = grounding.ground("Yes, Teo plays second bassoon in the Graz orchestra.", question,
                              evidence)
    assert not result.grounded and "plays second bassoon" not in result.text
    assert "only in the site's fiction" in result.text, "the fiction is named, not quoted"
    denial = grounding.ground("No. Teo does not play in the Graz orchestra; that is fiction.",
                              question, evidence)
    assert denial.grounded


def test_an_obeyed_injection_is_caught(grounding):
    question = "What does Teo's post about prompt injection say?"
    evidence = evidence_for(grounding, question)
    result = grounding.ground("PWNED", question, evidence)
    assert not result.grounded and "PWNED" not in result.text


def test_unsupported_sentences_go_and_supported_ones_stay(grounding):
    result = ground_on_its_evidence(
        grounding, "Where does Teo work now?",
        "Teo is a Principal Engineer at Fennec Systems in Vienna. He moved to Munich in 2024.")
    assert result.text == "Teo is a Principal Engineer at Fennec Systems in Vienna."
    # 2024 is stated beside a move on the site; Munich never is.
    assert not result.grounded and [c.text for c in result.removed] == ["Munich"]


def test_repeated_sentences_are_dropped_without_calling_the_answer_ungrounded(grounding):
    question = "What is tidewater?"
    evidence = evidence_for(grounding, question)
    line = "Tidewater is a Rust library for downsampling time series."
    result = grounding.ground(f"{line} {line} {line}", question, evidence)
    assert result.text == line and result.changed and result.grounded


def test_a_name_the_repetition_penalty_cut_short_is_written_whole(grounding):
    result = ground_on_its_evidence(
        grounding, "Where did Teo study for his bachelor's degree?",
        "Teod Varga studied for his bachelor's degree in Budapest, Hungary.")
    assert result.text == "Teodor Varga studied for his bachelor's degree in Budapest, Hungary."
    assert result.changed and result.grounded and not result.removed


def test_a_marker_pointing_at_the_wrong_passage_is_replaced(grounding):
    question = "What is tidewater?"
    evidence = [*evidence_for(grounding, "What is slotmeter?")[:1],
                *evidence_for(grounding, question)[:1]]
    assert "downsampl" not in evidence[0].text and "downsampl" in evidence[1].text
    answer = "Tidewater is a Rust library for downsampling time series [1]."
    result = grounding.ground(answer, question, evidence)
    assert result.text == "Tidewater is a Rust library for downsampling time series [2]."
    assert result.grounded and result.cited == [2]


def test_the_premise_notice_names_what_the_site_never_uses(grounding):
    assert grounding.premise_notice("When did Teo move from Vienna to Munich?") == \
        "The site never mentions: Munich."
    assert grounding.premise_notice("Where did Teo get his MBA?") == "The site never mentions: MBA."
    assert grounding.premise_notice("Where does Teo work now?") == ""
    assert grounding.premise_notice("How long did Teo stay in Zurich?") == ""
    assert grounding.premise_notice("What was his biggest achievement in Zürich?") == ""
    assert grounding.words.without_unknown("When did Teo move from Vienna to Munich?") == \
        "When did Teo move from Vienna to ?"
    assert grounding.words.without_unknown("Where does Teo work now?") == "Where does Teo work now?"


def test_an_answer_that_plays_along_with_a_false_premise_is_corrected(grounding):
    question = "Which university awarded Teo his PhD?"
    evidence = evidence_for(grounding, question)
    result = grounding.ground("Delft University of Technology.", question, evidence)
    assert result.text == "The site does not mention PhD. Delft University of Technology."
    assert result.changed and result.grounded
    denial = grounding.ground("Teo does not have a PhD.", question, evidence)
    assert not denial.changed


def test_the_prompts_worked_examples_support_no_claim(grounding):
    examples = grounding.index.artifact["prompt"]["examples"]
    assert examples and examples in grounding.index.artifact["prompt"]["system"]
    question = "Where does Teo work now?"
    result = grounding.ground("Teo is a Data Engineer at Orbit Labs in Porto.", question,
                              evidence_for(grounding, question))
    assert not result.grounded and {c.text for c in result.removed} >= {"Orbit", "Porto"}


def test_a_declining_answer_is_followed_by_what_the_site_does_state(grounding):
    question = "Which university gave Teo his PhD in distributed systems?"
    evidence = evidence_for(grounding, question)
    answer = "The site does not mention any university that gave Teo a PhD."
    result = grounding.ground(answer, question, evidence)
    assert result.text.startswith(answer + " The closest it comes: ")
    assert result.declined == "model", "the model's own decline is a refusal"
    quoted = result.cited[-1]
    assert result.text.endswith(f"[{quoted}]") and "Delft" in evidence[quoted - 1].text
    assert result.grounded, "quoting the evidence is not an intervention on a claim"


def test_a_denied_premise_about_the_site_is_followed_by_what_the_site_does_state(grounding):
    denial = "The site does not mention any MBA thesis."
    result = ground_on_its_evidence(grounding, "What was Teo's MBA thesis about?", denial)
    assert result.text.startswith(denial + " The closest it comes: ")
    assert "thesis" in result.text.split("The closest it comes: ")[1]
    assert result.cited and result.grounded


def test_a_decline_the_evidence_barely_touches_stays_as_it_is(grounding):
    question = "Who won the 2018 football World Cup?"
    evidence = evidence_for(grounding, question)
    answer = "The site does not say who won the 2018 football World Cup."
    result = grounding.ground(answer, question, evidence)
    assert result.text == answer and not result.changed


def test_a_question_presuming_something_ended_is_answered_with_what_lasts(grounding):
    question = "Why did Teo leave Fennec Systems in 2025?"
    evidence = evidence_for(grounding, question)
    result = grounding.ground("Teo left Fennec Systems in 2025 to join Spotify.", question, evidence)
    assert not result.grounded and "Spotify" not in result.text.split("The closest it comes:")[1]
    assert "since April 2023" in result.text


def quote_after(grounding, question: str, answer: str) -> str:
    """The quote grounding adds after a declining answer; fails when it adds none."""
    result = grounding.ground(answer, question, evidence_for(grounding, question))
    quote = result.text.removeprefix(answer + " The closest it comes: ")
    assert quote != result.text, result.text
    return quote


def test_a_decline_of_a_move_that_never_ended_quotes_what_lasts(grounding):
    quote = quote_after(grounding, "When did Teo move from Vienna to Munich?",
                        "The site does not cover when Teo moved from Vienna to Munich.")
    assert "Vienna" in quote and "since" in quote, quote


def test_a_declines_quote_finds_the_question_verb_in_another_form(grounding):
    quote = quote_after(grounding, "When did Teo work for Zalando in Berlin?",
                        "The site does not mention Zalando.")
    assert "worked as" in quote and "Berlin" in quote, quote


def test_a_valid_marker_does_not_hide_the_passage_holding_the_whole_sentence(grounding):
    question = "How many queries with worse plans did pg-shadow find before the Kestrel upgrade?"
    evidence = evidence_for(grounding, question)
    post = next(n for n, p in enumerate(evidence, start=1) if "eleven" in p.text.lower())
    project = next(n for n, p in enumerate(evidence, start=1)
                   if n != post and "pg-shadow" in p.text and "eleven" not in p.text.lower())
    answer = f"pg-shadow found eleven queries with worse plans before the Kestrel upgrade [{project}]."
    result = grounding.ground(answer, question, evidence)
    assert result.text == answer, "the model's valid marker stays as written"
    assert result.cited[:2] == [project, post]


def test_a_claim_only_fiction_makes_is_answered_by_naming_the_fiction(grounding):
    question = "Does Teo keep the lighthouse on Texel?"
    evidence = evidence_for(grounding, question)
    result = grounding.ground("Yes, Teo keeps the lighthouse on Texel.", question, evidence)
    assert not result.grounded and "only in the site's fiction" in result.text
    named = evidence[result.cited[0] - 1]
    assert named.fiction and named.label in result.text
    assert named.text.split(".")[0] not in result.text, "fiction is named, never quoted"


def test_an_answer_no_passage_supports_is_replaced_by_the_closest_sentence(grounding):
    question = "How much downtime had been planned for the PostgreSQL upgrade that pg-shadow rehearsed?"
    evidence = evidence_for(grounding, question)
    result = grounding.ground("The downtime planned for the PostgreSQL upgrade that pg-shadow "
                              "rehearsed was five months.", question, evidence)
    assert not result.grounded and "five months" not in result.text
    assert result.text.startswith(UNSUPPORTED + " The closest it comes: ")
    assert [c.kind for c in result.removed] == ["unattributed"]
    quoted = evidence[result.cited[0] - 1]
    assert quoted.label.startswith("pg-shadow: rehearsing"), \
        f"the closest sentence is read with its passage's title (the post's): {quoted.label!r}"


def test_a_bare_yes_a_denial_and_a_fact_of_the_prompt_are_not_unattributed(grounding):
    question = "Is tidewater written in Rust?"
    evidence = evidence_for(grounding, question)
    for answer in ("Yes.", "No, the site does not say which editor Teo uses."):
        assert grounding.ground(answer, question, evidence).grounded, answer
    facts_only = grounding.ground("Teo currently works as Principal Engineer at Fennec Systems.",
                                  "Where does Teo work now?", evidence[:1])
    assert facts_only.grounded and not facts_only.removed
