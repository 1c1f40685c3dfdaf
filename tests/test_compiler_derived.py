"""Derived facts: exact sentences for durations, employer order and years, on a small file."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from site_knowledge.compiler.derived import country_name, derived_facts, format_duration
from site_knowledge.compiler.model import MAX_PASSAGE_CHARS
from site_knowledge.compiler.ontology import Ontology
from site_knowledge.compiler.ontology_check import load_ontology

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "homepage"

FIXTURE = """
PROFILE = {
    "name": "Ada Example", "short_name": "Ada", "headline": "Engineer",
    "email": "ada@example.com", "summary": "A fixture person.",
    "current_location": {"city": "Lisbon", "country": "Portugal"},
}
CAREER = [
    {"id": "acme", "company": "Acme", "title": "Engineer", "start": "2015-01", "end": "2016-06",
     "location": {"city": "Oslo", "country": "Norway"}},
    {"id": "globex", "company": "Globex", "title": "Lead", "start": "2016-10", "end": None,
     "location": {"city": "Porto", "country": "Portugal"}},
]
LOCATION_HISTORY = [
    {"id": "oslo", "city": "Oslo", "country": "Norway", "start": "2015-01", "end": "2016-06"},
    {"id": "bergen", "city": "Bergen", "country": "Norway", "start": "2016-07", "end": "2016-09"},
    {"id": "porto", "city": "Porto", "country": "Portugal", "start": "2016-10", "end": "2018-12"},
    {"id": "lisbon", "city": "Lisbon", "country": "Portugal", "start": "2019-01", "end": None},
]
AUTHORITY = {
    "categories": {"PROFILE": "fact", "CAREER": "fact", "LOCATION_HISTORY": "fact"},
    "rules": [],
}
URLS = {"PROFILE": "", "CAREER": "cv/", "LOCATION_HISTORY": "cv/"}
"""

TODAY = date(2020, 3, 15)


@pytest.fixture(scope="module")
def ada(tmp_path_factory: pytest.TempPathFactory) -> Ontology:
    path = tmp_path_factory.mktemp("ada") / "ontology.py"
    path.write_text(FIXTURE, encoding="utf-8")
    return load_ontology(path)


def _text(ont: Ontology) -> str:
    return "\n".join(s.text for s in derived_facts(ont, TODAY).sections)


@pytest.mark.parametrize(
    ("months", "expected"),
    [(1, "1 month"), (8, "8 months"), (12, "1 year"), (13, "1 year and 1 month"),
     (33, "2 years and 9 months"), (60, "5 years")],
)  # fmt: skip
def test_format_duration(months, expected):
    assert format_duration(months) == expected


def test_country_name_takes_an_article_where_english_does():
    assert country_name("Netherlands") == "the Netherlands"
    assert country_name("United Kingdom") == "the United Kingdom"
    assert country_name("Austria") == "Austria"


def test_source_identity(ada):
    source = derived_facts(ada, TODAY)
    assert (source.id, source.kind, source.authority, source.url) == (
        "derived-facts", "ontology", "fact", "cv/",
    )  # fmt: skip
    assert "as of March 2020" in source.description
    assert all(len(s.text) <= MAX_PASSAGE_CHARS for s in source.sections)


@pytest.mark.parametrize(
    "sentence",
    [
        # time per country, summed over periods; open periods run to the build month
        "Ada lived in Norway for 1 year and 9 months in total "
        "(Oslo: January 2015 to June 2016; Bergen: July 2016 to September 2016).",
        "Ada has lived in Portugal for 3 years and 6 months so far "
        "(Porto: October 2016 to December 2018; Lisbon: since January 2019).",
        "Ada has lived in 2 countries: Norway, Portugal.",
        # time per city
        "Ada lived in Bergen, Norway, for 3 months (July 2016 to September 2016).",
        "Ada has lived in Lisbon, Portugal, for 1 year and 3 months so far (since January 2019).",
        # years per employer
        "Ada worked at Acme for 1 year and 6 months (Engineer in Oslo, Norway, January 2015 to June 2016).",
        "Ada has worked at Globex for 3 years and 6 months so far "
        "(Lead in Porto, Portugal, since October 2016).",
        # order of employers and the gap between them
        "Ada's employers in order, first to most recent: "
        "1. Acme (January 2015 to June 2016), 2. Globex (since October 2016).",
        "Ada's first employer was Acme; the current one is Globex.",
        "After Acme, Ada joined Globex in October 2016.",
        "Right before Globex, Ada worked at Acme.",
        "Between Acme and Globex, Ada had no employer for 3 months "
        "(July 2016 to September 2016), living in Bergen, Norway.",
        # calendar years
        "In 2016, Ada lived in Oslo, Norway (January to June), Bergen, Norway (July to "
        "September) and Porto, Portugal (October to December); worked as Engineer at Acme in "
        "Oslo, Norway (January to June) and Lead at Globex in Porto, Portugal (October to "
        "December); had no employer (July to September).",
        "In 2019, Ada lived in Lisbon, Portugal (all year); worked as Lead at Globex in "
        "Porto, Portugal (all year).",
        "In 2020, Ada lived in Lisbon, Portugal (January to March); worked as Lead at Globex in "
        "Porto, Portugal (January to March).",
        # total experience and current role: the current job's city is not the current home
        "As of March 2020, Ada has 5 years of professional experience at 2 employers, counting "
        "the months employed since January 2015; time without an employer is not counted.",
        "As of March 2020, Ada is Lead at Globex in Porto, Portugal, a job held since October 2016.",
        # employers and cities ranked and compared, countries before each move
        "Ada's employers by time worked, longest first: Globex (3 years and 6 months); "
        "Acme (1 year and 6 months).",
        "Ada's second job, at Globex (3 years and 6 months), was 2 years longer than the first "
        "job, at Acme (1 year and 6 months).",
        "Ada's first job, at Acme (1 year and 6 months), was 2 years shorter than the second "
        "job, at Globex (3 years and 6 months).",
        "The cities Ada has lived in, by time lived there, longest first: Porto, Portugal "
        "(2 years and 3 months); Oslo, Norway (1 year and 6 months); Lisbon, Portugal "
        "(1 year and 3 months); Bergen, Norway (3 months).",
        "Before moving to Portugal (October 2016), Ada had lived in 1 country: Norway.",
        "Ada currently lives in Lisbon, Portugal, since January 2019.",
    ],
)
def test_sentences(ada, sentence):
    assert sentence in _text(ada)


STUDIES = """
EDUCATION = [
    {"id": "ost", "institution": "Oslo Tech", "degree": "BSc", "field": "Physics",
     "start": "2010-09", "end": "2013-06", "location": {"city": "Oslo", "country": "Norway"}},
    {"id": "pu", "institution": "Porto University", "degree": "MSc", "field": "Physics",
     "start": "2013-09", "end": "2014-12", "location": {"city": "Porto", "country": "Portugal"}},
]
"""


def test_time_studied_breaks_and_the_first_job_after(tmp_path):
    path = tmp_path / "ontology.py"
    fixture = FIXTURE.replace('"LOCATION_HISTORY": "fact"}', '"LOCATION_HISTORY": "fact", '
                              '"EDUCATION": "fact"}')
    path.write_text(fixture + STUDIES + 'URLS["EDUCATION"] = "cv/"\n', encoding="utf-8")
    text = _text(load_ontology(path))
    assert ("Ada studied for 4 years and 2 months in total, across both degrees (BSc "
            "(bachelor's) at Oslo Tech, 2 years and 10 months; MSc (master's) at Porto "
            "University, 1 year and 4 months).") in text
    assert ("Between the BSc (bachelor's, finished June 2013) and the MSc (master's, started "
            "September 2013), Ada had a break of 2 months (July 2013 to August 2013).") in text
    assert ("From finishing the MSc (master's, December 2014) to starting at Acme (January "
            "2015): 1 month (the first job after it).") in text
    assert ("From finishing the MSc (master's, December 2014) to starting at Globex (October "
            "2016): 1 year and 10 months.") in text
    assert ("Ada studied at Oslo Tech for 2 years and 10 months, for the BSc (bachelor's, "
            "September 2010 to June 2013).") in text


def test_one_section_per_calendar_year(ada):
    headings = [s.heading for s in derived_facts(ada, TODAY).sections]
    assert [h for h in headings if h.startswith("Ada in ")] == [
        f"Ada in {year}" for year in range(2015, 2021)
    ]


def test_sections_are_one_question_each(ada):
    headings = [s.heading for s in derived_facts(ada, TODAY).sections]
    assert headings[:5] == [
        "Current role and home",
        "How long Ada lived in Norway (Oslo, Bergen)",
        "How long Ada lived in Portugal (Porto, Lisbon)",
        "Countries lived in",
        "How long Ada worked at Acme",
    ]
    assert "After Acme: Globex" in headings


def test_compiler_date_moves_open_periods_only(ada):
    later = "\n".join(s.text for s in derived_facts(ada, date(2021, 3, 1)).sections)
    assert "Ada has worked at Globex for 4 years and 6 months so far" in later
    assert "Ada worked at Acme for 1 year and 6 months" in later


def test_real_ontology_known_answers():
    ont = load_ontology(EXAMPLE / "ontology.py")
    text = "\n".join(s.text for s in derived_facts(ont, date(2026, 11, 30)).sections)
    assert "Teo lived in the Netherlands for 4 years and 4 months in total" in text
    assert "Teo lived in Switzerland for 2 years and 10 months in total" in text
    assert "Teo worked at Northwind Maps for 2 years and 9 months" in text
    assert "After Lumen Freight, Teo joined Kestrel Analytics in September 2017." in text
    assert "had no employer for 8 months (January 2017 to August 2017), living in Lisbon" in text
    assert "As of November 2026, Teo is Principal Engineer at Fennec Systems in Vienna" in text


def test_real_ontology_anchors_exist_on_the_career_page():
    ont = load_ontology(EXAMPLE / "ontology.py")
    source = derived_facts(ont, date(2026, 11, 30))
    assert source.url == "cv/"
    page = (EXAMPLE / "docs" / "cv.md").read_text(encoding="utf-8")
    for section in source.sections:
        if section.anchor:
            assert re.search(rf"#{re.escape(section.anchor)}[\s}}]", page), section.anchor
