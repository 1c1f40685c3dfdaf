"""Load and validate a site's ``ontology.py`` and turn its categories into sources.

The ontology file is plain Python data (PROFILE, CAREER, EDUCATION, LOCATION_HISTORY, SKILLS,
PROJECTS, AWARDS, ARCHITECTURE_RECEIPTS, BRANCHES, LORE, AUTHORITY, URLS). It is imported by
path; anything wrong with it is a :class:`BuildError` that names the file and the entry.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, cast

from site_knowledge.build.model import (
    ID_PATTERN,
    MAX_PASSAGE_CHARS,
    Authority,
    BuildError,
    Section,
    Source,
)

CATEGORIES = (
    "PROFILE",
    "CAREER",
    "EDUCATION",
    "LOCATION_HISTORY",
    "SKILLS",
    "PROJECTS",
    "AWARDS",
    "ARCHITECTURE_RECEIPTS",
    "BRANCHES",
    "LORE",
)
AUTHORITIES: tuple[Authority, ...] = ("fact", "prose", "fiction")
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?$")


def month_index(year: int, month: int) -> int:
    """A month as one integer (``year * 12 + month - 1``), so periods subtract cleanly."""
    return year * 12 + month - 1


def format_month(index: int) -> str:
    """``month_index(2017, 9)`` → ``"September 2017"``."""
    return f"{MONTH_NAMES[index % 12]} {index // 12}"


@dataclass(frozen=True)
class Place:
    """A city and its country."""

    city: str
    country: str

    def __str__(self) -> str:
        return f"{self.city}, {self.country}"


@dataclass(frozen=True)
class Job:
    """One CAREER entry. ``end`` is None for the current job; months are month indexes."""

    id: str
    company: str
    title: str
    start: int
    end: int | None
    place: Place
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Study:
    """One EDUCATION entry."""

    id: str
    institution: str
    degree: str
    field: str
    start: int
    end: int | None
    place: Place
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Residence:
    """One LOCATION_HISTORY entry: where the person lived, independent of employment."""

    id: str
    place: Place
    start: int
    end: int | None
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Project:
    """One PROJECTS entry; ``url`` is external, ``page`` a site-relative URL."""

    id: str
    name: str
    year: int
    summary: str
    url: str
    page: str
    tech: tuple[str, ...]


@dataclass(frozen=True)
class Award:
    """One AWARDS entry."""

    id: str
    name: str
    year: int
    issuer: str


@dataclass(frozen=True)
class Receipt:
    """One ARCHITECTURE_RECEIPTS entry: a claim about the site and its evidence."""

    id: str
    claim: str
    evidence: str


@dataclass(frozen=True)
class Story:
    """One BRANCHES or LORE entry. Always fiction."""

    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Profile:
    """Who the site is about."""

    name: str
    short_name: str
    headline: str
    current_location: Place
    email: str
    links: tuple[tuple[str, str], ...]
    summary: str
    site_url_path: str


@dataclass(frozen=True)
class Ontology:
    """A validated ontology. Sequences keep the file's order."""

    file: str
    profile: Profile
    career: tuple[Job, ...]
    education: tuple[Study, ...]
    residences: tuple[Residence, ...]
    skills: tuple[tuple[str, tuple[str, ...]], ...]
    projects: tuple[Project, ...]
    awards: tuple[Award, ...]
    receipts: tuple[Receipt, ...]
    branches: tuple[Story, ...]
    lore: tuple[Story, ...]
    authority: Mapping[str, Authority]
    rules: tuple[str, ...]
    urls: Mapping[str, str]


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
        data: the module's namespace (only the upper-case category names are read).
        file: the file name used in error locations.

    Returns:
        The validated ontology.
    """
    r = _Reader(file)
    profile = r.profile(data)
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
    authority, rules = r.authority(data)
    urls = r.urls(data)
    for category in ("PROFILE", *(c for c in CATEGORIES[1:] if data.get(c))):
        if category not in authority:
            raise BuildError(f"{file}: AUTHORITY", f"no authority for {category}")
        if category not in urls:
            raise BuildError(f"{file}: URLS", f"no URL for {category}")
    return Ontology(
        file, profile, career, education, residences, skills, projects, awards, receipts,
        branches, lore, authority, rules, urls,
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


def format_span(start: int, end: int | None) -> str:
    """``"September 2017 to May 2020"``, or ``"April 2023 to present"`` for an open period."""
    return f"{format_month(start)} to {format_month(end) if end is not None else 'present'}"


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
        if not isinstance(value, Mapping) or not isinstance(value.get("categories"), Mapping):
            raise self.fail("AUTHORITY", "missing (a dict with 'categories' and 'rules')")
        out: dict[str, Authority] = {}
        for category, level in value["categories"].items():
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


# --- sources -------------------------------------------------------------------------------

_SOURCE_INFO = {
    "PROFILE": ("profile", "Profile", "Who {name} is, where {short} lives now, and contacts."),
    "CAREER": ("career", "Career timeline", "Employers, job titles, dates and job locations."),
    "EDUCATION": ("education", "Education", "Degrees, institutions, dates and locations."),
    "LOCATION_HISTORY": (
        "geography",
        "Residence and relocation timeline",
        "Where {short} lived and when, including periods without an employer.",
    ),
    "SKILLS": ("skills", "Skills", "Programming languages, tools and spoken languages."),
    "PROJECTS": ("projects", "Projects", "Side projects with year, summary and technology."),
    "AWARDS": ("awards", "Awards", "Awards and distinctions with year and issuer."),
    "ARCHITECTURE_RECEIPTS": (
        "architecture",
        "How this site's ask box works",
        "Claims about this site and evidence.",
    ),
    "BRANCHES": (
        "fiction-branches",
        "Fiction: alternate-universe careers",
        "Clearly labelled fiction, never evidence about the real {short}.",
    ),
    "LORE": (
        "fiction-lore",
        "Fiction: running jokes",
        "Clearly labelled fiction, never evidence about the real {short}.",
    ),
}


def ontology_sources(ont: Ontology) -> list[Source]:
    """One source per non-empty category, each cut into sections of at most 900 characters.

    Args:
        ont: a validated ontology.

    Returns:
        Sources of kind ``ontology`` in CATEGORIES order, with ``path`` None.
    """
    sources = []
    for category in CATEGORIES:
        sections = _category_sections(ont, category)
        if not sections:
            continue
        ident, title, description = _SOURCE_INFO[category]
        names = {"name": ont.profile.name, "short": ont.profile.short_name}
        sources.append(
            Source(
                id=ident,
                kind="ontology",
                title=title,
                description=description.format(**names),
                url=ont.urls[category],
                authority=ont.authority[category],
                path=None,
                sections=tuple(sections),
            )
        )
    return sources


def bounded_sections(heading: str, anchor: str, sentences: list[str]) -> list[Section]:
    """Pack sentences into sections of at most MAX_PASSAGE_CHARS, never splitting a sentence
    that fits; a longer one is split between words. Continuations say so in the heading."""
    pieces = [p for s in sentences for p in _split_words(s, MAX_PASSAGE_CHARS)]
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + 1 + len(piece) <= MAX_PASSAGE_CHARS:
            chunks[-1] += " " + piece
        else:
            chunks.append(piece)
    return [
        Section(heading if i == 0 else f"{heading} (continued)", text, anchor)
        for i, text in enumerate(chunks)
    ]


def _split_words(sentence: str, limit: int) -> list[str]:
    out: list[str] = []
    for word in sentence.split():
        if out and len(out[-1]) + 1 + len(word) <= limit:
            out[-1] += " " + word
        else:
            out.append(word[:limit])
    return out


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def _profile(ont: Ontology) -> list[Section]:
    p = ont.profile
    links = "; ".join(f"{label}: {url}" for label, url in p.links)
    sentences = [
        f"{p.name} (known as {p.short_name}). {_sentence(p.headline)}",
        f"{p.short_name} currently lives in {p.current_location}.",
        f"Email: {p.email}.",
        *([f"Links: {links}."] if links else []),
        p.summary,
    ]
    return bounded_sections(p.name, "", sentences)


def _career(ont: Ontology) -> list[Section]:
    out = []
    for job in ont.career:
        if job.end is None:
            first = (
                f"{ont.profile.name} works as {job.title} at {job.company} in {job.place}, "
                f"since {format_month(job.start)} (current job)."
            )
        else:
            first = (
                f"{ont.profile.name} worked as {job.title} at {job.company} in {job.place}, "
                f"from {format_span(job.start, job.end)}."
            )
        notes = [f"At {job.company}: {_sentence(n)}" for n in job.notes]
        out += bounded_sections(f"{job.company}, {job.title}", job.id, [first, *notes])
    return out


def _education(ont: Ontology) -> list[Section]:
    out = []
    for study in ont.education:
        first = (
            f"{ont.profile.name} studied {study.field} at {study.institution} in "
            f"{study.place}, from {format_span(study.start, study.end)} (degree: {study.degree})."
        )
        notes = [_sentence(n) for n in study.notes]
        out += bounded_sections(f"{study.institution}, {study.degree}", study.id, [first, *notes])
    return out


def _geography(ont: Ontology) -> list[Section]:
    out = []
    for res in ont.residences:
        if res.end is None:
            first = (
                f"{ont.profile.name} has lived in {res.place}, since "
                f"{format_month(res.start)} (current home)."
            )
        else:
            first = f"{ont.profile.name} lived in {res.place}, from {format_span(res.start, res.end)}."
        out += bounded_sections(str(res.place), res.id, [first, *map(_sentence, res.notes)])
    return out


def _skills(ont: Ontology) -> list[Section]:
    return [
        s
        for group, items in ont.skills
        for s in bounded_sections(
            group, "skills", [f"{ont.profile.short_name}'s skills ({group}): {', '.join(items)}."]
        )
    ]


def _projects(ont: Ontology) -> list[Section]:
    out = []
    for proj in ont.projects:
        sentences = [
            f"{proj.name} ({proj.year}), a project by {ont.profile.name}: {_sentence(proj.summary)}",
            f"Technology: {', '.join(proj.tech)}.",
            *([f"Code: {proj.url}."] if proj.url else []),
        ]
        out += bounded_sections(proj.name, proj.id, sentences)
    return out


def _awards(ont: Ontology) -> list[Section]:
    out = []
    for award in ont.awards:
        text = f"{ont.profile.name} received the award '{award.name}' from {award.issuer} in {award.year}."
        out += bounded_sections(award.name, award.id, [text])
    return out


def _receipts(ont: Ontology) -> list[Section]:
    out = []
    for receipt in ont.receipts:
        sentences = [
            f"Claim: {_sentence(receipt.claim)}",
            f"Evidence: {_sentence(receipt.evidence)}",
        ]
        out += bounded_sections(receipt.claim, receipt.id, sentences)
    return out


def _fiction(ont: Ontology, stories: tuple[Story, ...]) -> list[Section]:
    label = f"Fiction, not a fact about the real {ont.profile.short_name}:"
    out = []
    for story in stories:
        out += bounded_sections(f"{story.title} (fiction)", story.id, [label, _sentence(story.text)])
    return out


_RENDERERS: dict[str, Callable[[Ontology], list[Section]]] = {
    "PROFILE": _profile,
    "CAREER": _career,
    "EDUCATION": _education,
    "LOCATION_HISTORY": _geography,
    "SKILLS": _skills,
    "PROJECTS": _projects,
    "AWARDS": _awards,
    "ARCHITECTURE_RECEIPTS": _receipts,
    "BRANCHES": lambda ont: _fiction(ont, ont.branches),
    "LORE": lambda ont: _fiction(ont, ont.lore),
}


def _category_sections(ont: Ontology, category: str) -> list[Section]:
    return _RENDERERS[category](ont)
