"""Ontology loading and validation: every defect names the file, the entry and the reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.ontology_check import load_ontology

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


BAD_CASES = {
    "missing_field": (
        'CAREER = [job("acme"), {k: v for k, v in job("globex", "2017-01", None).items()'
        ' if k != "company"}]',
        "CAREER[1]", "missing required field 'company'"),
    "bad_date": ('CAREER = [job("acme", start="2015-13")]', "CAREER[0]",
                 "'start' is not a date: '2015-13'"),
    "bad_date_words": ('CAREER = [job("acme"), job("globex", start="March 2017", end=None)]',
                       "CAREER[1]", "'March 2017'"),
    "end_before_start": ('CAREER = [job("acme", start="2016-06", end="2015-01")]', "CAREER[0]",
                         "end 2015-01 is before start"),
    "overlap": (
        "LOCATION_HISTORY = [\n"
        ' {"id": "oslo", "city": "Oslo", "country": "Norway", "start": "2015-01", "end": "2016-06"},\n'
        ' {"id": "porto", "city": "Porto", "country": "Portugal", "start": "2016-10", "end": None},\n'
        ' {"id": "bergen", "city": "Bergen", "country": "Norway", "start": "2016-06",'
        ' "end": "2016-09"},\n]',
        "LOCATION_HISTORY[2]", "overlaps 'oslo'"),
    "duplicate_id": (
        'CAREER = [job("acme")]\nPROJECTS = [{"id": "acme", "name": "Acme tool", "year": 2016,'
        ' "summary": "A tool.", "page": "projects/", "tech": ["Go"]}]',
        "PROJECTS[0]", "duplicate id 'acme'"),
    "bad_id": ('CAREER = [job("Acme_Corp")]', "CAREER[0]", "id 'Acme_Corp'"),
    "bad_authority": (
        'CAREER = [job("acme")]\n'
        'AUTHORITY = {"categories": {"PROFILE": "fact", "CAREER": "facts"}, "rules": []}',
        "AUTHORITY['CAREER']", "unknown authority 'facts'"),
    "missing_url": ('CAREER = [job("acme")]\nURLS = {"PROFILE": ""}', "URLS", "no URL for CAREER"),
    "absolute_url": (
        'CAREER = [job("acme")]\nURLS = {"PROFILE": "", "CAREER": "https://elsewhere.example/cv/"}',
        "URLS['CAREER']", "must be site-relative"),
    "overlap_open": (
        'AUTHORITY = {"categories": {"PROFILE": "fact", "LOCATION_HISTORY": "fact"}, "rules": []}\n'
        'URLS = {"PROFILE": "", "LOCATION_HISTORY": "cv/"}\nLOCATION_HISTORY = [\n'
        ' {"id": "porto", "city": "Porto", "country": "Portugal", "start": "2016-10", "end": None},\n'
        ' {"id": "lisbon", "city": "Lisbon", "country": "Portugal", "start": "2019-01", "end": None},\n]',
        "LOCATION_HISTORY[1]", "overlaps 'porto'"),
    "unknown_category": (
        'AUTHORITY = {"categories": {"PROFILE": "fact", "HOBBIES": "prose"}, "rules": []}\n'
        'URLS = {"PROFILE": ""}',
        "AUTHORITY['HOBBIES']", "unknown category"),
    "no_profile": ('del PROFILE\nAUTHORITY = {"categories": {}, "rules": []}\nURLS = {}',
                   "PROFILE", "missing"),
    "raises": ('CAREER = [{"id": "acme"}]\nraise RuntimeError("ontology generation failed")',
               "", "RuntimeError: ontology generation failed"),
}


@pytest.mark.parametrize("name", sorted(BAD_CASES))
def test_bad_ontology_names_file_entry_and_reason(tmp_path, name):
    defect, entry, reason = BAD_CASES[name]
    path = tmp_path / f"{name}.py"
    path.write_text((BAD / "base.py.txt").read_text(encoding="utf-8") + "\n" + defect + "\n",
                    encoding="utf-8")
    with pytest.raises(BuildError) as caught:
        load_ontology(path)
    assert caught.value.where == (f"{name}.py: {entry}" if entry else f"{name}.py")
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


GENERIC = """
ENTITIES = [{"id": "quire", "name": "Quire", "kind": "product", "attributes": [
    {"name": "licence", "value": "MIT", "source": "index.md"},
    {"name": "supported Python versions", "value": ["3.11", 3.12, 4], "as_of": "2025-03-14",
     "source": "install/index.md#requirements"},
]}]
"""
ATTR = "ENTITIES[0] ('quire') attributes"

GENERIC_CASES = {
    "unknown_entity_key": ('ENTITIES[0]["version"] = "1.0"', "ENTITIES[0] ('quire')",
                           "unknown key 'version' (expected id, name, kind, attributes)"),
    "unknown_attribute_key": ('ENTITIES[0]["attributes"][0]["url"] = "x"', f"{ATTR}[0]",
                              "unknown key 'url' (expected name, value, source, as_of)"),
    "value_dict": ('ENTITIES[0]["attributes"][0]["value"] = {"spdx": "MIT"}',
                   f"{ATTR}[0] ('licence')", "must be a string, a number or a list of them"),
    "value_bool": ('ENTITIES[0]["attributes"][0]["value"] = [True]', f"{ATTR}[0] ('licence')",
                   "'value' True must be"),
    "value_empty_list": ('ENTITIES[0]["attributes"][0]["value"] = []', f"{ATTR}[0] ('licence')",
                         "'value' is empty"),
    "value_blank_item": ('ENTITIES[0]["attributes"][0]["value"] = ["3.11", " "]',
                         f"{ATTR}[0] ('licence')", "'value' is empty"),
    "value_missing": ('del ENTITIES[0]["attributes"][0]["value"]', f"{ATTR}[0] ('licence')",
                      "missing required field 'value'"),
    "name_not_text": ('ENTITIES[0]["attributes"][0]["name"] = 3', f"{ATTR}[0]",
                      "'name' must be a non-empty string"),
    "duplicate_entity": ("ENTITIES.append(dict(ENTITIES[0]))", "ENTITIES[1]",
                         "duplicate id 'quire' (first used at ENTITIES[0])"),
    "entity_id_of_a_person_entry": (SMALL.replace("NOTE", "'A note.'")
                                    + 'ENTITIES[0]["id"] = "acme"', "ENTITIES[0]",
                                    "duplicate id 'acme' (first used at CAREER[0])"),
    "duplicate_attribute": (
        'ENTITIES[0]["attributes"].append({"name": "Licence", "value": "BSD", "source": "a.md"})',
        f"{ATTR}[2] ('Licence')", f"duplicate attribute name (first at {ATTR}[0] ('licence'))"),
    "no_attributes": ('ENTITIES[0]["attributes"] = []', "ENTITIES[0] ('quire')",
                      "'attributes' must be a non-empty list of dicts"),
    "attribute_not_dict": ('ENTITIES[0]["attributes"][1] = "licence: MIT"', f"{ATTR}[1]",
                           "must be a dict"),
    "entities_not_list": ("ENTITIES = ENTITIES[0]", "ENTITIES", "must be a list of dicts"),
    "source_is_url": ('ENTITIES[0]["attributes"][0]["source"] = "install/"',
                      f"{ATTR}[0] ('licence')", "'source' 'install/' must name a page"),
    "source_outside": ('ENTITIES[0]["attributes"][0]["source"] = "../README.md"',
                       f"{ATTR}[0] ('licence')", "must name a page of the site"),
    "bad_as_of": ('ENTITIES[0]["attributes"][1]["as_of"] = "2025-02-30"',
                  f"{ATTR}[1] ('supported Python versions')", "'as_of' is not a date: '2025-02-30'"),
    "misspelt_name": ("ENTITES = ENTITIES", "ENTITES", "unknown name"),
    "person_category_without_profile": (
        'SKILLS = {"Languages": ["Go"]}', "PROFILE", "missing, but SKILLS describes a person"),
    "nothing": ("ENTITIES = []", "PROFILE", "missing, and ENTITIES is empty"),
}


@pytest.mark.parametrize("name", sorted(GENERIC_CASES))
def test_bad_generic_ontology_names_file_entry_and_reason(tmp_path, name):
    defect, entry, reason = GENERIC_CASES[name]
    path = tmp_path / f"{name}.py"
    path.write_text(GENERIC + defect + "\n", encoding="utf-8")
    with pytest.raises(BuildError) as caught:
        load_ontology(path)
    assert caught.value.where == f"{name}.py: {entry}"
    assert reason in caught.value.reason


def test_generic_ontology_needs_no_profile_authority_or_urls(tmp_path):
    path = tmp_path / "ontology.py"
    path.write_text(GENERIC + '_HELPER = "ok"\n', encoding="utf-8")
    ont = load_ontology(path)
    assert ont.profile is None and ont.rules == () and ont.career == ()
    (quire,) = ont.entities
    assert (quire.id, quire.name, quire.kind) == ("quire", "Quire", "product")
    licence, versions = quire.attributes
    assert (licence.values, licence.page, licence.anchor, licence.as_of) == (("MIT",), "index.md",
                                                                           "", "")
    assert versions.values == ("3.11", "3.12", "4")
    assert (versions.page, versions.anchor) == ("install/index.md", "requirements")
    assert versions.as_of == "14 March 2025"
    with pytest.raises(BuildError, match="has no PROFILE"):
        ont.person  # noqa: B018 - the property is what raises


@pytest.mark.parametrize(("as_of", "written"), [("2025", "2025"), ("2025-03", "March 2025")])
def test_as_of_reads_as_precisely_as_it_was_given(tmp_path, as_of, written):
    path = tmp_path / "ontology.py"
    path.write_text(GENERIC.replace("2025-03-14", as_of), encoding="utf-8")
    assert load_ontology(path).entities[0].attributes[1].as_of == written


def test_person_and_generic_forms_together(tmp_path):
    path = tmp_path / "ontology.py"
    path.write_text(SMALL.replace("NOTE", "'A note.'") + GENERIC, encoding="utf-8")
    ont = load_ontology(path)
    assert ont.person.name == "Ada Example"
    assert [e.id for e in ont.entities] == ["quire"]
