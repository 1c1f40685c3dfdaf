"""The grounding's patterns, word lists and thresholds, read from the data file that its
JavaScript twin imports too (``site_knowledge/browser/grounding_rules.json``; SPEC.md,
"Where the rules live"). Patterns are Python ``re`` sources; the browser translates them."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

RULES: dict[str, dict[str, Any]] = json.loads(
    resources.files("site_knowledge.browser").joinpath("grounding_rules.json").read_text("utf-8"))


def pattern(name: str) -> re.Pattern[str]:
    """The named pattern compiled, case-insensitive where the file says so."""
    source, ignorecase = RULES["patterns"][name]
    return re.compile(source, re.IGNORECASE if ignorecase else 0)


def words(name: str) -> tuple[str, ...]:
    """The named word list, in the file's order."""
    return tuple(RULES["words"][name])


def table(name: str) -> dict[str, Any]:
    """The named word table (word to number or to word)."""
    return dict(RULES["words"][name])


def count(name: str) -> int:
    """The named whole-number threshold."""
    return int(RULES["thresholds"][name])


def share(name: str) -> float:
    """The named fractional threshold."""
    return float(RULES["thresholds"][name])


def phrase(name: str) -> str:
    """The named fixed text an answer may carry."""
    return str(RULES["texts"][name])
