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
