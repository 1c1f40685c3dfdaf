"""The packaged questions no site should answer (``offtopic.txt``), without heavy imports: the
gate's calibration scores them, and a cold build's background worker embeds them early."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from types import MappingProxyType


@cache
def offtopic_sections() -> Mapping[str, tuple[str, ...]]:
    """The packaged questions no site should answer (``offtopic.txt``), by section; the file
    is read once per process."""
    text = resources.files("site_knowledge.compiler").joinpath("offtopic.txt").read_text("utf-8")
    sections: dict[str, list[str]] = {}
    current = sections.setdefault("general", [])
    for line in (raw.strip() for raw in text.splitlines()):
        if line.startswith("# section:"):
            current = sections.setdefault(line.removeprefix("# section:").strip(), [])
        elif line and not line.startswith("#"):
            current.append(line)
    return MappingProxyType({name: tuple(questions) for name, questions in sections.items()})


def offtopic_questions() -> list[str]:
    """Every packaged question no site should answer, section after section."""
    return [q for questions in offtopic_sections().values() for q in questions]
