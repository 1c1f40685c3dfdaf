"""A site's ontology as validated data: categories, authority levels, months and periods.

The ontology file is plain Python data in two forms, either or both: the person form (PROFILE,
CAREER, EDUCATION, LOCATION_HISTORY, SKILLS, PROJECTS, AWARDS, ARCHITECTURE_RECEIPTS, BRANCHES,
LORE, with AUTHORITY and URLS) and the generic form (ENTITIES: named things with attributes,
each citing the page that states it). :mod:`site_knowledge.compiler.ontology_check` loads and
validates it into these types; :mod:`site_knowledge.compiler.ontology_sources` and
:mod:`site_knowledge.compiler.ontology_entities` render them as citable sentences.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from site_knowledge.compiler.model import Authority, BuildError

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
TOP_LEVEL_NAMES = (*CATEGORIES, "ENTITIES", "AUTHORITY", "URLS")
"""Every upper-case name an ontology file may define; helpers start with ``_`` or are lower-case."""
AUTHORITIES: tuple[Authority, ...] = ("fact", "prose", "fiction")
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


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


DEGREE_LEVELS = {
    "ba": "bachelor's", "bs": "bachelor's", "bsc": "bachelor's", "beng": "bachelor's",
    "ma": "master's", "ms": "master's", "msc": "master's", "meng": "master's", "mba": "master's",
    "mphil": "master's", "phd": "doctorate", "dphil": "doctorate",
}
"""Degree abbreviations and the level a visitor asks about ("his master's")."""


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

    @property
    def level(self) -> str | None:
        """What an abbreviated degree is (``MSc`` → ``master's``); None otherwise."""
        return DEGREE_LEVELS.get(self.degree.lower().replace(".", "").replace(" ", ""))

    def degree_named(self, detail: str = "") -> str:
        """The degree with its level and ``detail`` in brackets: ``MSc (master's, 2014)``."""
        inside = ", ".join(part for part in (self.level, detail) if part)
        return f"{self.degree} ({inside})" if inside else self.degree


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
class Attribute:
    """One stated fact about an entity, and the page (with an optional anchor) that states it.

    ``values`` holds one item, or a list's items in order; ``as_of`` is ``""`` or a date as
    written for readers ("August 2026"); ``where`` locates it in the file for errors.
    """

    name: str
    values: tuple[str, ...]
    page: str
    anchor: str
    as_of: str
    where: str


@dataclass(frozen=True)
class Entity:
    """One ENTITIES entry: a product, project, service or anything else a site documents."""

    id: str
    name: str
    kind: str
    attributes: tuple[Attribute, ...]


@dataclass(frozen=True)
class Ontology:
    """A validated ontology. Sequences keep the file's order; ``profile`` is None for a file
    of entities only (then every person category is empty)."""

    file: str
    profile: Profile | None
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
    entities: tuple[Entity, ...] = ()

    @property
    def person(self) -> Profile:
        """The profile, for code that renders the person form.

        Raises:
            BuildError: the file has no PROFILE.
        """
        if self.profile is None:
            raise BuildError(self.file, "has no PROFILE, so it says nothing about a person")
        return self.profile


def format_span(start: int, end: int | None) -> str:
    """``"September 2017 to May 2020"``, or ``"April 2023 to present"`` for an open period."""
    return f"{format_month(start)} to {format_month(end) if end is not None else 'present'}"
