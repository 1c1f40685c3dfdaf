"""Each page's language: front matter, then one folder per language, then the theme's."""

from __future__ import annotations

import pytest

from site_knowledge.compiler.languages import (
    folder_language,
    language_tag,
    main_language,
    page_languages,
)
from site_knowledge.compiler.model import BuildError


def test_language_tags_are_stored_lower_case_with_hyphens():
    assert language_tag("pt_BR", "a.md") == "pt-br"
    assert language_tag("zh-Hant", "a.md") == "zh-hant"


@pytest.mark.parametrize("value", ["english", "", "e", 7, "zh hant"])
def test_a_lang_that_is_not_a_tag_names_the_page(value):
    with pytest.raises(BuildError, match=r"guide\.md.*is not a language tag"):
        language_tag(value, "guide.md")


def test_top_folders_named_by_iso_639_1_codes_are_languages():
    assert folder_language("zh-hant/tutorial/index.md") == "zh-hant"
    assert folder_language("de/index.md") == "de"
    assert folder_language("api/index.md") is None, "api is not ISO 639-1"
    assert folder_language("en.md") is None, "a page, not a folder"


def test_folders_count_only_when_two_or_more_name_languages():
    paths = ["en/index.md", "zh/index.md", "zh/a.md", "about.md"]
    assert page_languages(paths, ["", "", "ja", ""], "en") == ["en", "zh", "ja", "en"]
    lone = ["it/index.md", "guide.md"]
    assert page_languages(lone, ["", ""], "en") == ["en", "en"], "one folder named 'it' is a section"
    assert page_languages(lone, ["", ""], "") == ["", ""]


def test_the_main_language_is_the_commonest_first_seen_on_a_tie():
    assert main_language(["zh", "en", "en", "zh"]) == "zh"
    assert main_language(["en", "zh", "zh"]) == "zh"
    assert main_language([]) == ""
