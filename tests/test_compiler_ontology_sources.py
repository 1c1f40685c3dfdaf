"""Ontology sources: categories rendered as bounded, well-formed sentences, on real files."""

from __future__ import annotations

import re
from pathlib import Path

from test_compiler_ontology_check import SMALL

from site_knowledge.compiler.model import ID_PATTERN, MAX_PASSAGE_CHARS
from site_knowledge.compiler.ontology_check import load_ontology
from site_knowledge.compiler.ontology_sources import ontology_sources

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "homepage"


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
    ont = load_ontology(EXAMPLE / "ontology.py")
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
    sources = {s.id: s for s in ontology_sources(load_ontology(EXAMPLE / "ontology.py"))}
    career = " ".join(s.text for s in sources["career"].sections)
    assert (
        "Teodor Varga worked as Staff Engineer at Northwind Maps in Zurich, Switzerland, "
        "from June 2020 to February 2023." in career
    )
    assert "works as Principal Engineer at Fennec Systems in Vienna, Austria, since April 2023" in (career)
    geography = " ".join(s.text for s in sources["geography"].sections)
    assert "lived in Lisbon, Portugal, from January 2017 to August 2017." in geography


def _page_source(url: str) -> Path:
    docs = EXAMPLE / "docs"
    if url == "":
        return docs / "index.md"
    candidates = [docs / f"{url.rstrip('/')}.md", docs / url / "index.md"]
    return next((p for p in candidates if p.is_file()), candidates[0])


def test_real_ontology_links_to_real_pages_and_anchors():
    for source in ontology_sources(load_ontology(EXAMPLE / "ontology.py")):
        page = _page_source(source.url)
        assert page.is_file(), f"{source.id}: no page for URL {source.url!r}"
        text = page.read_text(encoding="utf-8")
        for section in source.sections:
            if section.anchor:
                pattern = rf"\{{:?[^}}\n]*#{re.escape(section.anchor)}[\s}}]"
                assert re.search(pattern, text), f"{page.name} lacks anchor #{section.anchor}"
