"""Ontology loading, validation and sources, on real files."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from site_knowledge.build.model import ID_PATTERN, MAX_PASSAGE_CHARS, BuildError
from site_knowledge.build.ontology import load_ontology, ontology_sources

ROOT = Path(__file__).resolve().parents[1]
BAD = Path(__file__).parent / "data" / "ontology_bad"

SMALL = """
PROFILE = {
    "name": "Ada Example", "headline": "Engineer", "email": "ada@example.com",
    "current_location": {"city": "Lisbon", "country": "Portugal"}, "summary": "A fixture.",
}
CAREER = [{
    "id": "acme", "company": "Acme", "title": "Engineer", "start": "2015-01", "end": "2016",
    "location": {"city": "Oslo", "country": "Norway"}, "notes": [NOTE],
}]
AUTHORITY = {"categories": {"PROFILE": "fact", "CAREER": "fact"}, "rules": ["Facts first."]}
URLS = {"PROFILE": "", "CAREER": "cv/"}
"""


@pytest.mark.parametrize(
    ("fixture", "where", "reason"),
    [
        ("missing_field.py", "missing_field.py: CAREER[1]", "missing required field 'company'"),
        ("bad_date.py", "bad_date.py: CAREER[0]", "'start' is not a date: '2015-13'"),
        ("bad_date_words.py", "bad_date_words.py: CAREER[1]", "'March 2017'"),
        ("end_before_start.py", "end_before_start.py: CAREER[0]", "end 2015-01 is before start"),
        ("overlap.py", "overlap.py: LOCATION_HISTORY[2]", "overlaps 'oslo'"),
        ("duplicate_id.py", "duplicate_id.py: PROJECTS[0]", "duplicate id 'acme'"),
        ("bad_id.py", "bad_id.py: CAREER[0]", "id 'Acme_Corp'"),
        ("bad_authority.py", "bad_authority.py: AUTHORITY['CAREER']", "unknown authority 'facts'"),
        ("missing_url.py", "missing_url.py: URLS", "no URL for CAREER"),
        ("absolute_url.py", "absolute_url.py: URLS['CAREER']", "must be site-relative"),
        ("overlap_open.py", "overlap_open.py: LOCATION_HISTORY[1]", "overlaps 'porto'"),
        ("unknown_category.py", "unknown_category.py: AUTHORITY['HOBBIES']", "unknown category"),
        ("no_profile.py", "no_profile.py: PROFILE", "missing"),
        ("raises.py", "raises.py", "RuntimeError: ontology generation failed"),
    ],
)
def test_bad_ontology_names_file_entry_and_reason(fixture, where, reason):
    with pytest.raises(BuildError) as caught:
        load_ontology(BAD / fixture)
    assert caught.value.where == where
    assert reason in caught.value.reason


def test_syntax_error_names_file_and_line(tmp_path):
    path = tmp_path / "ontology.py"
    shutil.copy(BAD / "syntax_error.py.txt", path)
    with pytest.raises(BuildError) as caught:
        load_ontology(path)
    assert caught.value.where == "ontology.py: line 5"
    assert caught.value.reason.startswith("syntax error")


def test_missing_file_is_a_build_error(tmp_path):
    with pytest.raises(BuildError, match="not found"):
        load_ontology(tmp_path / "nope.py")


def test_year_only_dates_span_whole_years_and_long_notes_split(tmp_path):
    note = " ".join(["The quote engine priced trucking routes between depots."] * 40)
    path = tmp_path / "ontology.py"
    path.write_text(SMALL.replace("NOTE", repr(note)), encoding="utf-8")
    ont = load_ontology(path)
    sections = ontology_sources(ont)[1].sections
    assert "from January 2015 to December 2016" in sections[0].text
    assert len(sections) > 2
    assert all(len(s.text) <= MAX_PASSAGE_CHARS for s in sections)
    assert sections[1].heading == "Acme, Engineer (continued)"
    assert all(s.anchor == "acme" for s in sections)
    assert " ".join(s.text for s in sections).count("priced trucking") == 40


def test_real_ontology_sources_are_bounded_and_well_formed():
    ont = load_ontology(ROOT / "ontology.py")
    sources = ontology_sources(ont)
    ids = [s.id for s in sources]
    assert ids == [
        "profile", "career", "education", "geography", "skills", "projects", "awards",
        "architecture", "fiction-branches", "fiction-lore",
    ]  # fmt: skip
    for source in sources:
        assert ID_PATTERN.fullmatch(source.id)
        assert source.kind == "ontology" and source.path is None
        assert source.sections, source.id
        for section in source.sections:
            assert 0 < len(section.text) <= MAX_PASSAGE_CHARS
            assert section.heading
    by_id = {s.id: s for s in sources}
    assert {by_id["fiction-branches"].authority, by_id["fiction-lore"].authority} == {"fiction"}
    assert all(s.authority == "fact" for s in sources if not s.id.startswith("fiction"))
    for source in (by_id["fiction-branches"], by_id["fiction-lore"]):
        assert all(sec.text.startswith("Fiction, not a fact") for sec in source.sections)


def test_real_ontology_timelines_read_as_sentences():
    sources = {s.id: s for s in ontology_sources(load_ontology(ROOT / "ontology.py"))}
    career = " ".join(s.text for s in sources["career"].sections)
    assert (
        "Teodor Varga worked as Staff Engineer at Northwind Maps in Zurich, Switzerland, "
        "from June 2020 to February 2023." in career
    )
    assert "works as Principal Engineer at Fennec Systems in Vienna, Austria, since April 2023" in (career)
    geography = " ".join(s.text for s in sources["geography"].sections)
    assert "lived in Lisbon, Portugal, from January 2017 to August 2017." in geography


def _page_source(url: str) -> Path:
    docs = ROOT / "docs"
    if url == "":
        return docs / "index.md"
    candidates = [docs / f"{url.rstrip('/')}.md", docs / url / "index.md"]
    return next((p for p in candidates if p.is_file()), candidates[0])


def test_real_ontology_links_to_real_pages_and_anchors():
    for source in ontology_sources(load_ontology(ROOT / "ontology.py")):
        page = _page_source(source.url)
        assert page.is_file(), f"{source.id}: no page for URL {source.url!r}"
        text = page.read_text(encoding="utf-8")
        for section in source.sections:
            if section.anchor:
                pattern = rf"\{{:?[^}}\n]*#{re.escape(section.anchor)}[\s}}]"
                assert re.search(pattern, text), f"{page.name} lacks anchor #{section.anchor}"
