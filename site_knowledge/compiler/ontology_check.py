"""Load a site's ``ontology.py`` by path and validate it into an :class:`Ontology`.

Anything wrong with the file is a :class:`BuildError` that names the file and the entry.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Mapping
from datetime import date
from itertools import pairwise
from pathlib import Path
from typing import Any, cast

from site_knowledge.compiler.model import ID_PATTERN, Authority, BuildError
from site_knowledge.compiler.ontology import (
    AUTHORITIES,
    CATEGORIES,
    MONTH_NAMES,
    TOP_LEVEL_NAMES,
    Attribute,
    Award,
    Entity,
    Job,
    Ontology,
    Place,
    Profile,
    Project,
    Receipt,
    Residence,
    Story,
    Study,
    format_span,
    month_index,
)

_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?$")
_AS_OF = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


def load_ontology(path: Path) -> Ontology:
    """Import ``path`` and validate it.

    Args:
        path: the ontology file, e.g. the site's ``ontology.py``.

    Returns:
        The validated ontology.

    Raises:
        BuildError: the file is missing, does not import, or holds bad data.
    """
    name = path.name
    if not path.is_file():
        raise BuildError(name, "file not found")
    spec = importlib.util.spec_from_file_location("_site_knowledge_ontology", path)
    if spec is None or spec.loader is None:
        raise BuildError(name, "cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # for dataclasses and the like while the file runs
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise BuildError(f"{name}: line {exc.lineno}", f"syntax error: {exc.msg}") from exc
    except Exception as exc:
        raise BuildError(name, f"raised {type(exc).__name__}: {exc}") from exc
    finally:
        sys.modules.pop(spec.name, None)
    return parse_ontology(vars(module), name)


def parse_ontology(data: Mapping[str, Any], file: str = "ontology.py") -> Ontology:
    """Validate the module-level constants of an ontology file.

    Args:
        data: the module's namespace (only upper-case names are read; helpers start with
            ``_`` or are lower-case).
        file: the file name used in error locations.

    Returns:
        The validated ontology: the person form, the generic form (ENTITIES), or both.
    """
    r = _Reader(file)
    r.known_names(data)
    profile = r.profile(data) if "PROFILE" in data else None
    r.person_needs_profile(data, profile)
    residences = tuple(r.residence(e, w) for w, e in r.entries(data, "LOCATION_HISTORY"))
    _check_overlaps(residences, file)
    career = tuple(r.job(e, w) for w, e in r.entries(data, "CAREER"))
    education = tuple(r.study(e, w) for w, e in r.entries(data, "EDUCATION"))
    skills = r.skills(data)
    projects = tuple(r.project(e, w) for w, e in r.entries(data, "PROJECTS"))
    awards = tuple(r.award(e, w) for w, e in r.entries(data, "AWARDS"))
    receipts = tuple(r.receipt(e, w) for w, e in r.entries(data, "ARCHITECTURE_RECEIPTS"))
    branches = tuple(r.story(e, w) for w, e in r.entries(data, "BRANCHES"))
    lore = tuple(r.story(e, w) for w, e in r.entries(data, "LORE"))
    entities = tuple(r.entity(e, w) for w, e in r.entries(data, "ENTITIES"))
    person = profile is not None
    authority, rules = r.authority(data) if person or "AUTHORITY" in data else ({}, ())
    urls = r.urls(data) if person or "URLS" in data else {}
    for category in ("PROFILE", *(c for c in CATEGORIES[1:] if data.get(c))) if person else ():
        if category not in authority:
            raise BuildError(f"{file}: AUTHORITY", f"no authority for {category}")
        if category not in urls:
            raise BuildError(f"{file}: URLS", f"no URL for {category}")
    return Ontology(
        file, profile, career, education, residences, skills, projects, awards, receipts,
        branches, lore, authority, rules, urls, entities,
    )  # fmt: skip


def _check_overlaps(residences: tuple[Residence, ...], file: str) -> None:
    indexed = sorted(enumerate(residences), key=lambda pair: pair[1].start)
    for (_, before), (i, after) in pairwise(indexed):
        if before.end is None or before.end >= after.start:
            raise BuildError(
                f"{file}: LOCATION_HISTORY[{i}]",
                f"period {format_span(after.start, after.end)} overlaps '{before.id}' "
                f"({format_span(before.start, before.end)})",
            )


class _Reader:
    """Field access with error locations; every failure is a BuildError."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.seen_ids: dict[str, str] = {}

    def fail(self, where: str, reason: str) -> BuildError:
        return BuildError(f"{self.file}: {where}", reason)

    def entries(self, data: Mapping[str, Any], category: str) -> list[tuple[str, Mapping[str, Any]]]:
        value = data.get(category, [])
        if not isinstance(value, list | tuple):
            raise self.fail(category, "must be a list of dicts")
        out = []
        for i, entry in enumerate(value):
            where = f"{category}[{i}]"
            if not isinstance(entry, Mapping):
                raise self.fail(where, "must be a dict")
            out.append((where, entry))
        return out

    def field(self, entry: Mapping[str, Any], key: str, where: str) -> Any:
        if key not in entry or entry[key] is None or entry[key] == "":
            raise self.fail(where, f"missing required field '{key}'")
        return entry[key]

    def text(self, entry: Mapping[str, Any], key: str, where: str) -> str:
        value = self.field(entry, key, where)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"'{key}' must be a non-empty string")
        return " ".join(value.split())

    def optional_text(self, entry: Mapping[str, Any], key: str, where: str) -> str:
        return self.text(entry, key, where) if entry.get(key) else ""

    def id(self, entry: Mapping[str, Any], where: str) -> str:
        value = self.text(entry, "id", where)
        if "#" in value or not ID_PATTERN.fullmatch(value):
            raise self.fail(where, f"id '{value}' must be lower-case letters, digits and hyphens")
        if value in self.seen_ids:
            raise self.fail(where, f"duplicate id '{value}' (first used at {self.seen_ids[value]})")
        self.seen_ids[value] = where
        return value

    def month(self, entry: Mapping[str, Any], key: str, where: str, *, end: bool) -> int:
        value = self.field(entry, key, where)
        match = _DATE.fullmatch(value) if isinstance(value, str) else None
        month = int(match.group(2) or (12 if end else 1)) if match else 0
        if match is None or not 1 <= month <= 12:
            raise self.fail(where, f"'{key}' is not a date: {value!r} (expected YYYY-MM or YYYY)")
        return month_index(int(match.group(1)), month)

    def period(self, entry: Mapping[str, Any], where: str) -> tuple[int, int | None]:
        start = self.month(entry, "start", where, end=False)
        if "end" not in entry:
            raise self.fail(where, "missing required field 'end' (None for the present)")
        if entry["end"] is None:
            return start, None
        end = self.month(entry, "end", where, end=True)
        if end < start:
            raise self.fail(where, f"end {entry['end']} is before start {entry['start']}")
        return start, end

    def year(self, entry: Mapping[str, Any], where: str) -> int:
        value = self.field(entry, "year", where)
        text = str(value) if isinstance(value, int | str) and not isinstance(value, bool) else ""
        if not re.fullmatch(r"\d{4}", text):
            raise self.fail(where, f"'year' is not a year: {value!r} (expected YYYY)")
        return int(text)

    def place(self, entry: Mapping[str, Any], where: str) -> Place:
        value = self.field(entry, "location", where)
        if not isinstance(value, Mapping):
            raise self.fail(where, "'location' must be a dict with 'city' and 'country'")
        return Place(self.text(value, "city", where), self.text(value, "country", where))

    def strings(self, entry: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        value = entry.get(key, [])
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.fail(where, f"'{key}' must be a list of non-empty strings")
        return tuple(" ".join(v.split()) for v in value)

    def notes(self, entry: Mapping[str, Any], where: str) -> tuple[str, ...]:
        return self.strings(entry, "notes", where)

    def url(self, value: object, where: str) -> str:
        if not isinstance(value, str) or (
            "://" in value or value.startswith("/") or ".." in value or "#" in value
        ):
            raise self.fail(where, f"URL {value!r} must be site-relative, like 'cv/' or ''")
        return value

    def known_names(self, data: Mapping[str, Any]) -> None:
        for name in data:
            if name.isupper() and not name.startswith("_") and name not in TOP_LEVEL_NAMES:
                raise self.fail(name, f"unknown name (expected {', '.join(TOP_LEVEL_NAMES)}; "
                                      "start a helper's name with '_')")

    def person_needs_profile(self, data: Mapping[str, Any], profile: Profile | None) -> None:
        if profile is not None:
            return
        for category in CATEGORIES[1:]:
            if data.get(category):
                raise self.fail("PROFILE", f"missing, but {category} describes a person: "
                                           "PROFILE says who")
        if not data.get("ENTITIES"):
            raise self.fail("PROFILE", "missing, and ENTITIES is empty: an ontology needs "
                                       "PROFILE (a person's site) or ENTITIES (the things a "
                                       "site documents)")

    def only_keys(self, entry: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
        for key in entry:
            if key not in allowed:
                raise self.fail(where, f"unknown key {key!r} (expected {', '.join(allowed)})")

    def entity(self, e: Mapping[str, Any], where: str) -> Entity:
        ident = self.id(e, where)
        where = f"{where} ({ident!r})"
        self.only_keys(e, ("id", "name", "kind", "attributes"), where)
        name, kind = self.text(e, "name", where), self.optional_text(e, "kind", where)
        listed = self.field(e, "attributes", where)
        if not isinstance(listed, list | tuple) or not listed:
            raise self.fail(where, "'attributes' must be a non-empty list of dicts")
        attributes: list[Attribute] = []
        for i, entry in enumerate(listed):
            if not isinstance(entry, Mapping):
                raise self.fail(f"{where} attributes[{i}]", "must be a dict")
            attribute = self.attribute(entry, f"{where} attributes[{i}]")
            first = next((a for a in attributes if a.name.lower() == attribute.name.lower()), None)
            if first is not None:
                raise self.fail(attribute.where, f"duplicate attribute name (first at {first.where})")
            attributes.append(attribute)
        return Entity(ident, name, kind, tuple(attributes))

    def attribute(self, a: Mapping[str, Any], where: str) -> Attribute:
        self.only_keys(a, ("name", "value", "source", "as_of"), where)
        name = self.text(a, "name", where)
        where = f"{where} ({name!r})"
        values = self.values(self.field(a, "value", where), where)
        page, _, anchor = self.text(a, "source", where).partition("#")
        if "://" in page or page.startswith("/") or ".." in page.split("/") or not page.endswith(
            (".md", ".markdown")
        ):
            raise self.fail(where, f"'source' {a['source']!r} must name a page of the site by its "
                                   "file under docs/, like 'installation/index.md#requirements'")
        return Attribute(name, values, page, anchor, self.as_of(a.get("as_of"), where), where)

    def values(self, value: object, where: str) -> tuple[str, ...]:
        items = list(value) if isinstance(value, list | tuple) else [value]
        if not items:
            raise self.fail(where, "'value' is empty")
        out = []
        for item in items:
            if isinstance(item, bool) or not isinstance(item, str | int | float):
                raise self.fail(where, f"'value' {item!r} must be a string, a number or a list "
                                       "of them")
            text = " ".join(str(item).split())
            if not text:
                raise self.fail(where, "'value' is empty")
            out.append(text)
        return tuple(out)

    def as_of(self, value: object, where: str) -> str:
        if value is None:
            return ""
        match = _AS_OF.fullmatch(value) if isinstance(value, str) else None
        try:
            day = date(int(match[1]), int(match[2] or 1), int(match[3] or 1)) if match else None
        except ValueError:
            day = None
        if match is None or day is None:
            raise self.fail(where, f"'as_of' is not a date: {value!r} "
                                   "(expected YYYY-MM-DD, YYYY-MM or YYYY)")
        month = f"{MONTH_NAMES[day.month - 1]} {day.year}"
        return f"{day.day} {month}" if match[3] else month if match[2] else str(day.year)

    def project(self, entry: Mapping[str, Any], where: str) -> Project:
        ident, name = self.id(entry, where), self.text(entry, "name", where)
        year, summary = self.year(entry, where), self.text(entry, "summary", where)
        url = self.optional_text(entry, "url", where)
        page = self.url(entry["page"], where) if entry.get("page") is not None else ""
        if not url and "page" not in entry:
            raise self.fail(where, "missing required field 'url' or 'page'")
        if "tech" not in entry:
            raise self.fail(where, "missing required field 'tech'")
        return Project(ident, name, year, summary, url, page, self.strings(entry, "tech", where))

    def job(self, e: Mapping[str, Any], where: str) -> Job:
        ident, company = self.id(e, where), self.text(e, "company", where)
        title, (start, end) = self.text(e, "title", where), self.period(e, where)
        return Job(ident, company, title, start, end, self.place(e, where), self.notes(e, where))

    def study(self, e: Mapping[str, Any], where: str) -> Study:
        ident, institution = self.id(e, where), self.text(e, "institution", where)
        degree, field = self.text(e, "degree", where), self.text(e, "field", where)
        start, end = self.period(e, where)
        place, notes = self.place(e, where), self.notes(e, where)
        return Study(ident, institution, degree, field, start, end, place, notes)

    def residence(self, e: Mapping[str, Any], where: str) -> Residence:
        ident = self.id(e, where)
        place = Place(self.text(e, "city", where), self.text(e, "country", where))
        start, end = self.period(e, where)
        return Residence(ident, place, start, end, self.notes(e, where))

    def award(self, e: Mapping[str, Any], where: str) -> Award:
        ident, name = self.id(e, where), self.text(e, "name", where)
        return Award(ident, name, self.year(e, where), self.text(e, "issuer", where))

    def receipt(self, e: Mapping[str, Any], where: str) -> Receipt:
        ident, claim = self.id(e, where), self.text(e, "claim", where)
        return Receipt(ident, claim, self.text(e, "evidence", where))

    def story(self, entry: Mapping[str, Any], where: str) -> Story:
        return Story(self.id(entry, where), self.text(entry, "title", where), self.text(entry, "text", where))

    def profile(self, data: Mapping[str, Any]) -> Profile:
        value = data.get("PROFILE")
        if not isinstance(value, Mapping):
            raise self.fail("PROFILE", "missing (a dict with name, headline, ...)")
        where = "PROFILE"
        name = self.text(value, "name", where)
        location = self.field(value, "current_location", where)
        if not isinstance(location, Mapping):
            raise self.fail(where, "'current_location' must be a dict with 'city' and 'country'")
        links = value.get("links", {})
        if not isinstance(links, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in links.items()
        ):
            raise self.fail(where, "'links' must map labels to URLs")
        return Profile(
            name=name,
            short_name=self.optional_text(value, "short_name", where) or name.split()[0],
            headline=self.text(value, "headline", where),
            current_location=Place(self.text(location, "city", where), self.text(location, "country", where)),
            email=self.text(value, "email", where),
            links=tuple(links.items()),
            summary=self.text(value, "summary", where),
            site_url_path=self.url(value.get("site_url_path", ""), where),
        )

    def skills(self, data: Mapping[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        value = data.get("SKILLS", {})
        if not isinstance(value, Mapping):
            raise self.fail("SKILLS", "must be a dict: category -> list of skills")
        out = []
        for category, items in value.items():
            where = f"SKILLS[{category!r}]"
            if not isinstance(category, str) or not category.strip():
                raise self.fail(where, "category must be a non-empty string")
            out.append((category, self.strings({"skills": items}, "skills", where)))
        return tuple(out)

    def authority(self, data: Mapping[str, Any]) -> tuple[dict[str, Authority], tuple[str, ...]]:
        value = data.get("AUTHORITY")
        if not isinstance(value, Mapping) or not isinstance(value.get("categories", {}), Mapping):
            raise self.fail("AUTHORITY", "missing (a dict with 'categories' and 'rules')")
        out: dict[str, Authority] = {}
        for category, level in value.get("categories", {}).items():
            where = f"AUTHORITY[{category!r}]"
            if category not in CATEGORIES:
                raise self.fail(where, f"unknown category (expected one of {', '.join(CATEGORIES)})")
            if level not in AUTHORITIES:
                raise self.fail(where, f"unknown authority {level!r} (expected fact, prose or fiction)")
            out[category] = cast(Authority, level)
        return out, self.strings(value, "rules", "AUTHORITY")

    def urls(self, data: Mapping[str, Any]) -> dict[str, str]:
        value = data.get("URLS")
        if not isinstance(value, Mapping):
            raise self.fail("URLS", "missing (a dict: category -> site-relative page URL)")
        out = {}
        for category, url in value.items():
            if category not in CATEGORIES:
                raise self.fail(f"URLS[{category!r}]", "unknown category")
            out[category] = self.url(url, f"URLS[{category!r}]")
        return out
