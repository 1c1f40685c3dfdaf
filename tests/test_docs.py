"""The documentation cannot drift from the code: every artifact field is documented in
``docs/architecture.md`` (every plugin option is, by construction: tests/test_docs_site.py)."""

from __future__ import annotations

import re
from pathlib import Path

from site_knowledge.retrieval.artifact import artifact_schema

ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _first_column_names(markdown: str, heading: str) -> set[str]:
    """The backticked names in the first column of the first table under ``heading``."""
    section = markdown.split(heading, 1)[1]
    table = re.search(r"((?:^\|.*\n)+)", section, re.MULTILINE)
    assert table, f"no table under {heading}"
    cells = re.findall(r"^\| ([^|]+) \|", table.group(1), re.MULTILINE)
    return {name for cell in cells for name in re.findall(r"`([a-z_0-9]+)`", cell)}


def test_every_artifact_field_is_documented() -> None:
    documented = _first_column_names(ARCHITECTURE.read_text(encoding="utf-8"), "## The artifact")
    assert documented == set(artifact_schema()["properties"])
