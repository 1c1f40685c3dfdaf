"""Sentences, numbers and negation as grounding reads an answer."""

from __future__ import annotations

from site_knowledge.grounding.text import (
    cite_phrases_as_markers,
    inflection_key,
    is_decline,
    is_meta,
    is_negated,
    numbers,
    plain,
    sentences,
)


def test_sentences_split_on_stops_and_newlines_but_not_abbreviations():
    answer = "Teo joined in Sept. 2017 [1]. He left, e.g. after 3 years!\n- Berlin\n- Zurich. Done"
    assert [s.text for s in sentences(answer)] == [
        "Teo joined in Sept. 2017 [1].", "He left, e.g. after 3 years!", "- Berlin", "- Zurich.",
        "Done",
    ]


def test_sentence_offsets_point_into_the_answer():
    answer = "  One. Two?\n\nThree"
    for sentence in sentences(answer):
        assert answer[sentence.start:sentence.end] == sentence.text


def test_numbers_read_separators_suffixes_and_words():
    found = numbers("€85,000 a year, about 60k, since 2019, two kids, 3.5 stars, 40%")
    assert [value for _, value in found] == [85000, 60000, 2019, 3.5, 40, 2]


def test_plain_drops_markers_urls_and_the_backticks_of_code():
    assert plain("See [2] https://x.org/a and [docs](cv/) or `rm -rf 42`").split() == \
        ["See", "and", "[docs]", "or", "rm", "-rf", "42"]


def test_inflection_key_folds_regular_verb_endings_only():
    keys = {w: inflection_key(w) for w in ("work", "worked", "working", "live", "lived", "living",
                                             "study", "studied", "stop", "stopped", "called",
                                             "needed", "speed", "string", "thing")}
    assert keys["work"] == keys["worked"] == keys["working"]
    assert keys["live"] == keys["lived"] == keys["living"]
    assert keys["study"] == keys["studied"]
    assert keys["stop"] == keys["stopped"] and keys["called"] == "call" and keys["needed"] == "need"
    assert (keys["speed"], keys["string"], keys["thing"]) == ("speed", "string", "thing")


def test_negation():
    assert is_negated("Teo never worked at Google.")
    assert is_negated("The site doesn't say.")
    assert not is_negated("Teo works at Fennec Systems.")


def test_a_sentence_that_only_says_where_the_answer_is_written_is_meta():
    for meta in ("This can be seen in excerpt [1].", "This is indicated in the documentation excerpt [3].",
                 "This is specified in the [2] excerpt from the site.",
                 "This rule is mentioned in the lore section of the site, specifically in the "
                 "excerpt [1] and [2]."):
        assert is_meta(meta), meta
    for claim in ("It is stated in the documentation that the default is 90 [1].",
                  "The excerpt [1] clearly states that he said no.",
                  "This is not mentioned in the excerpts.",
                  "This is described in the settings file."):
        assert not is_meta(claim), claim


def test_a_citation_phrase_may_name_the_excerpt_before_its_markers():
    assert cite_phrases_as_markers("It is typically 'multipart' as per the excerpt [3].") == \
        "It is typically 'multipart' [3]."
    assert cite_phrases_as_markers("It lasted 30 minutes, as stated in the provided excerpts [1] [2].") == \
        "It lasted 30 minutes [1] [2]."
    assert cite_phrases_as_markers("It is shown in the excerpt below.") == "It is shown in the excerpt below."


def test_a_decline_is_negated_before_the_clause_its_saying_reports():
    assert is_decline("The site does not mention any MBA.")
    assert is_decline("The site does not say that Teo moved to Munich.")
    assert is_decline("The site provides no information on the price.")
    assert not is_decline("The site states that the step will not take place if the field "
                          "is left out [1].")
    assert not is_decline("The site mentions that it does not support LDAP groups.")
    assert not is_decline("Teo never worked at Google.")
