"""The site's words: folding, names, and the names of a question the site never uses."""

from __future__ import annotations

from site_knowledge.retrieval.words import SiteWords, fold, is_name

WORDS = SiteWords(["studies", "munich", "vienna", "teo", "thesis", "kubernetes"], ["the", "what"])


def test_fold_strips_diacritics_possessives_and_plurals():
    assert [fold(w) for w in ("Teo's", "Cities", "Systems", "status", "Zürich’s")] == \
        ["teo", "city", "system", "status", "zurich"]


def test_a_name_is_capitalised_after_the_first_word_or_has_inner_capitals():
    assert is_name("Vienna", opener=False)
    assert not is_name("Vienna", opener=True)
    assert is_name("iOS", opener=True) and is_name("PhD", opener=True)
    assert not is_name("Yes", opener=False)
    assert not is_name("thesis", opener=False)


def test_unknown_terms_are_names_no_site_word_shares_a_stem_with():
    question = "What was Teo's MBA thesis at Spotify about, and his Studies in Munich? MBA"
    assert WORDS.unknown_terms(question) == ["MBA", "Spotify"]
    assert WORDS.unknown_terms("What about Kubernetes in 2024?") == []


def test_the_ranking_question_leaves_the_unknown_names_out():
    assert WORDS.without_unknown("Did Teo  use Spotify in Vienna?") == "Did Teo use in Vienna?"
    assert WORDS.without_unknown("Did Teo  move to Vienna?") == "Did Teo  move to Vienna?"
