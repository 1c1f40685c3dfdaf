"""The packaged questions no site should answer (``offtopic.txt``), without heavy imports: the
gate's calibration scores them, and a cold build's background worker embeds them early."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources


def offtopic_sections() -> dict[str, list[str]]:
    """The packaged questions no site should answer (``offtopic.txt``), by section."""
    text = resources.files("site_knowledge.build").joinpath("offtopic.txt").read_text("utf-8")
    sections: dict[str, list[str]] = {}
    current = sections.setdefault("general", [])
    for line in (raw.strip() for raw in text.splitlines()):
        if line.startswith("# section:"):
            current = sections.setdefault(line.removeprefix("# section:").strip(), [])
        elif line and not line.startswith("#"):
            current.append(line)
    return sections


def offtopic_questions(sections: Mapping[str, list[str]] | None = None) -> list[str]:
    """Every packaged question no site should answer, section after section.

    Args:
        sections: :func:`offtopic_sections` when the caller has read them already.
    """
    return [q for questions in (sections or offtopic_sections()).values() for q in questions]
