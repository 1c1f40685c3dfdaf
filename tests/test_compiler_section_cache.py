"""Sections cached by page: the same sections as a fresh parse, read back by a later build
without parsing, dropped when the code changes, and only the latest build's pages kept."""

from __future__ import annotations

import json

from site_knowledge.compiler import section_cache
from site_knowledge.compiler.chunking import merge_small_sections, page_sections
from site_knowledge.compiler.section_cache import SectionCache

PAGE = ("<h1 id='guide'>Guide</h1><p>Intro text.</p><h2 id='setup'>Setup</h2>"
        "<p>Install it with pip.</p><h2 id='use'>Use</h2><p>Run it.</p>")
OTHER = "<h1>Other</h1><p>Something else entirely.</p>"


def _no_parsing(monkeypatch) -> None:
    def refuse(html: str, title: str):
        raise AssertionError("parsed again")
    monkeypatch.setattr(section_cache, "page_sections", refuse)


def test_a_later_build_reads_the_sections_without_parsing(tmp_path, monkeypatch):
    first = SectionCache(tmp_path, "site")
    parsed = first.sections(PAGE, "Guide")
    assert parsed == merge_small_sections(page_sections(PAGE, "Guide"))
    first.save()
    _no_parsing(monkeypatch)
    assert SectionCache(tmp_path, "site").sections(PAGE, "Guide") == parsed


def test_a_new_title_another_site_or_new_code_parses_again(tmp_path, monkeypatch):
    cache = SectionCache(tmp_path, "site")
    cache.sections(PAGE, "Guide")
    cache.save()
    calls = []
    monkeypatch.setattr(section_cache, "page_sections",
                        lambda html, title: calls.append(title) or page_sections(html, title))
    SectionCache(tmp_path, "site").sections(PAGE, "Handbook")
    SectionCache(tmp_path, "another site").sections(PAGE, "Guide")
    monkeypatch.setattr(section_cache, "code_fingerprint", lambda: "changed")
    SectionCache(tmp_path, "site").sections(PAGE, "Guide")
    assert calls == ["Handbook", "Guide", "Guide"]


def test_a_save_keeps_the_latest_builds_pages_and_a_bad_file_is_ignored(tmp_path):
    cache = SectionCache(tmp_path, "site")
    cache.sections(PAGE, "Guide")
    cache.sections(OTHER, "Other")
    cache.save()
    later = SectionCache(tmp_path, "site")
    later.sections(OTHER, "Other")
    later.save()
    stored = json.loads(later.path.read_text(encoding="utf-8"))
    assert [cut[0][1] for cut in stored["entries"].values()] == ["Something else entirely."]
    later.path.write_text("{not json", encoding="utf-8")
    assert SectionCache(tmp_path, "site").sections(OTHER, "Other")[0].text == (
        "Something else entirely.")


def test_nothing_is_written_when_the_pages_are_those_read(tmp_path):
    cache = SectionCache(tmp_path, "site")
    cache.sections(PAGE, "Guide")
    cache.save()
    cache.path.write_text(cache.path.read_text(encoding="utf-8") + " ", encoding="utf-8")
    again = SectionCache(tmp_path, "site")
    again.sections(PAGE, "Guide")
    again.save()
    assert again.path.read_text(encoding="utf-8").endswith(" "), "a rewrite drops the mark"
