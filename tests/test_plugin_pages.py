"""Page rules shared by the plugin and compile: front matter, drafts, opt-out."""

from __future__ import annotations

import pytest
from mkdocs.utils.meta import get_data

from site_knowledge.compiler.model import BuildError
from site_knowledge.plugin.pages import (
    is_draft,
    page_authority,
    page_input,
    page_opt_out,
    read_page_source,
    theme_language,
)


def test_front_matter_and_opt_out_forms() -> None:
    markdown, meta = read_page_source(b"---\ntitle: T\nsite_knowledge: {chat: false}\n---\n# H\n",
                                      "a.md")
    assert markdown == "# H\n" and meta["title"] == "T"
    assert page_opt_out(meta, "chat") and not page_opt_out(meta, "index")
    assert page_opt_out({"site_knowledge": False}, "index")
    assert not page_opt_out({}, "chat")


@pytest.mark.parametrize("raw", [
    "---\ntitle: T\ndate: 2026-12-05\n---\n\n\n# H\n", "---\n---\n# H\n", "---\n\n---\n# H\n",
    "# No front matter\n", "---\n{}\n---\n# H\n", "Title: MultiMarkdown\nAuthor: A\n\n# H\n",
    "\ufeff---\na: 1\n---\nx\r\ny\r\n",
])
def test_markdown_and_meta_are_what_mkdocs_reads(raw: str) -> None:
    text = raw.lstrip("\ufeff").replace("\r\n", "\n")
    assert read_page_source(raw.encode("utf-8"), "a.md") == get_data(text)


@pytest.mark.parametrize(("raw", "message"), [
    (b"---\ntitle: [unclosed\n---\n# Hi\n", r"^x\.md: malformed front matter at line 3"),
    ("# Caf\u00e9\n".encode("latin-1"), r"^x\.md: not UTF-8 \(byte 5, line 1\)"),
    (b"---\n- a\n---\n# Hi\n", r"^x\.md: front matter is not a mapping"),
])
def test_bad_sources_name_the_file(raw: bytes, message: str) -> None:
    with pytest.raises(BuildError, match=message):
        read_page_source(raw, "x.md")


def test_only_a_true_draft_is_a_draft() -> None:
    assert is_draft({"draft": True})
    assert not is_draft({"draft": "yes"}) and not is_draft({})


def test_a_page_may_mark_its_authority() -> None:
    assert page_authority({}, "a.md") == "prose"
    assert page_authority({"site_knowledge": {"authority": "fiction"}}, "a.md") == "fiction"
    assert page_authority({"site_knowledge": False}, "a.md") == "prose"
    with pytest.raises(BuildError, match=r"^lore\.md: site_knowledge\.authority is 'myth'"):
        page_authority({"site_knowledge": {"authority": "myth"}}, "lore.md")


def test_the_example_lore_page_is_fiction(example_site) -> None:
    lore = next(s for s in example_site.artifact["sources"] if s.get("path") == "lore.md")
    assert lore.get("authority") == "fiction"


def test_the_theme_language_as_a_tag():
    from mkdocs.utils.babel_stub import Locale

    assert theme_language({"language": "zh-Hant"}) == "zh-hant", "Material"
    assert theme_language({"locale": Locale.parse("pt_BR", "_")}) == "pt-br", "MkDocs' themes"
    assert theme_language({"language": "custom"}) == "" and theme_language({}) == ""


def test_a_page_language_from_front_matter_must_be_a_tag():
    assert page_input("a.md", "a/", "A", {"lang": "ja"}, "<p>x</p>").lang == "ja"
    assert page_input("a.md", "a/", "A", {}, "<p>x</p>").lang == ""
    with pytest.raises(BuildError, match=r"a\.md: lang 'Japanese!' is not a language tag"):
        page_input("a.md", "a/", "A", {"lang": "Japanese!"}, "<p>x</p>")
