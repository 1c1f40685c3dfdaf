"""Sentences, numbers and negation as grounding reads an answer."""

from __future__ import annotations

from site_knowledge.grounding.text import (
    inflection_key,
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
