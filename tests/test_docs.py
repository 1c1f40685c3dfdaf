"""The README cannot drift from the code: every plugin option and artifact field is documented."""

from __future__ import annotations

import re
from pathlib import Path

from site_knowledge.plugin.options import SiteKnowledgeOptions
from site_knowledge.retrieval.artifact import artifact_schema

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _table_keys(heading: str) -> set[str]:
    section = README.split(heading, 1)[1]
    table = re.search(r"((?:^\|.*\n)+)", section, re.MULTILINE)
    assert table, f"no table under {heading}"
    return set(re.findall(r"^\| `([a-z_0-9]+)` \|", table.group(1), re.MULTILINE))


def test_every_plugin_option_is_documented():
    options = {name for name, _ in SiteKnowledgeOptions._schema}
    assert _table_keys("### Plugin options") == options


def test_every_artifact_field_is_documented():
    assert _table_keys("### The artifact") == set(artifact_schema()["properties"])
