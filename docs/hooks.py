"""MkDocs hook of this documentation: renders the configuration reference at build time.

``configuration.md`` holds the marker below; the table comes from the plugin's options class
(``option_reference``) and the budgets' fields (``site_knowledge.budgets``), so it cannot drift.
"""

from __future__ import annotations

from typing import Any

from site_knowledge.budgets import FIELD_HELP, READERS
from site_knowledge.plugin.options import option_reference

MARKER = "<!-- site-knowledge:options -->"


def _yaml(value: object) -> str:
    """A default as it would be written in mkdocs.yml."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_yaml(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_yaml(v)}" for k, v in value.items()) + "}"
    return str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def options_table() -> str:
    """The options and the budgets' fields as Markdown tables."""
    rows = ["| option | type | default | description |", "|---|---|---|---|"]
    for doc in option_reference():
        if not doc.description.strip():
            raise ValueError(f"option {doc.name!r} has no description")
        rows.append(f"| `{doc.name}` | {doc.type} | `{_yaml(doc.default)}` | {_cell(doc.description)} |")
    readers = list(READERS)
    budgets = [
        "",
        "### `budgets`",
        "",
        "Each reader's fields and their defaults; `budgets` overrides any of them, e.g.",
        "`budgets: {browser: {evidence_chars: 900}}`.",
        "",
        "| field | " + " | ".join(f"{reader} default" for reader in readers) + " | what it sets |",
        "|---|" + "---|" * len(readers) + "---|",
    ]
    for field, description in FIELD_HELP.items():
        defaults = " | ".join(f"`{getattr(READERS[reader], field)}`" for reader in readers)
        budgets.append(f"| `{field}` | {defaults} | {_cell(description)} |")
    return "\n".join(rows + budgets)


def on_page_markdown(markdown: str, /, **_: Any) -> str:
    """Replace the marker of the configuration page with the generated tables."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, options_table())
