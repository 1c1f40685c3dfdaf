"""The compiler's data model: sources, passages and the one error type a build raises."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*(#[0-9]+)?$")
MAX_PASSAGE_CHARS = 900

SourceKind = Literal["ontology", "page"]
Authority = Literal["fact", "prose", "fiction"]


class BuildError(Exception):
    """A build input is bad. Carries where (a file, an ontology key) and what is wrong."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


@dataclass(frozen=True)
class Section:
    """A bounded block of a source's text, before it is cut into passages."""

    heading: str
    text: str
    anchor: str = ""


@dataclass(frozen=True)
class Source:
    """A document readers can cite: one published page, or one ontology category."""

    id: str
    kind: SourceKind
    title: str
    description: str
    url: str
    authority: Authority
    path: str | None = None
    sections: tuple[Section, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Passage:
    """At most 900 characters of one source, with its heading path and anchored URL."""

    id: str
    source_id: str
    heading: str
    text: str
    url: str

