"""Each page's language: front matter, then one folder per language, then the theme's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sites import OUTPUT, build_site

from site_knowledge.compiler.languages import (
    folder_language,
    language_tag,
    main_language,
    page_languages,
)
from site_knowledge.compiler.model import BuildError
from site_knowledge.retrieval import load_index
from site_knowledge.retrieval.artifact import load_artifact


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


CORPUS = Path(__file__).parent / "corpora" / "fastapi-i18n"


@pytest.fixture(scope="module")
def two_languages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FastAPI's four tutorial pages in en/ and zh/, one page's language set in front matter."""
    root = tmp_path_factory.mktemp("i18n")
    shutil.copytree(CORPUS, root / "site")
    (root / "site" / "docs" / "en" / "tutorial" / "aside.md").write_text(
        "---\nlang: ja\n---\n# 静的ファイル\n\n`StaticFiles` で静的ファイルを配信します。\n",
        encoding="utf-8")
    build_site(root / "site" / "mkdocs.yml", root / "out")
    return root / "out"


@pytest.mark.slow
def test_a_real_build_records_each_page_language_and_a_question_keeps_to_its_own(two_languages):
    artifact, _ = load_artifact(two_languages)
    langs = {s["path"]: s["lang"] for s in artifact["sources"]}
    assert langs["en/tutorial/cors.md"] == "en" and langs["zh/tutorial/cors.md"] == "zh"
    assert langs["en/tutorial/aside.md"] == "ja", "front matter outranks the folder"
    on_disk = json.loads((two_languages / OUTPUT / "site-knowledge.json").read_text("utf-8"))
    stored = [s.get("lang") for s in on_disk["sources"]]
    assert on_disk["site"]["lang"] in ("en", "zh") and stored.count(None) == 4, "site's language left out"
    index = load_index(two_languages)
    question = "如何允许其他源的前端跨域调用 API？"
    kept = index.search(question, mode="bm25", lang="zh")
    assert kept.answerable and kept.lang == "zh"
    assert kept.hits[0].source.path == "zh/tutorial/cors.md"
    assert {h.source.lang for h in kept.hits} == {"zh"}
    assert {h.source.lang for h in index.search(question, lang="zh").hits} == {"zh"}
    english = index.search("How do I allow requests from another origin with CORS?", lang="en-GB")
    assert english.lang == "en" and {h.source.lang for h in english.hits} == {"en"}
    assert index.search(question).lang is None, "no language: the whole site"
