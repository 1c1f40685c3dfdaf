"""Text handling shared by the battery's validation and its scorer: normalising, matching an
alternative, splitting an answer into sentences, and the canned refusals."""

from __future__ import annotations

import re

CONSTANT_REFUSAL = "The site doesn't say."
"""The constant-refusal baseline's answer to every question."""

CANNED_REFUSALS = (
    CONSTANT_REFUSAL,
    "That isn't covered on this site.",
    "That is not on this site.",
    "There is no information about that on this site.",
    "The site does not mention that.",
    "I don't know.",
    "I can't answer that.",
)
"""Answers that say nothing: a required fact that one of these satisfies earns nothing."""

_ABBREVIATIONS = re.compile(
    r"(?:\b(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|e\.g|i\.e|approx|ca|vs|etc|st|dr|mr|ms)"
    r"|\b[a-z])\.$",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def normalise(text: str) -> str:
    """Lower case, straight quotes and dashes, no markdown emphasis, single spaces."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"').replace("\u2013", "-").replace("\u2014", "-")
    text = re.sub(r"[*_`]+", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _phrase(alternative: str) -> re.Pattern[str]:
    phrase = re.escape(normalise(alternative)).replace(r"\ ", r"\s+")
    return re.compile(rf"(?<!\w){phrase}(?!\w)")


def search(alternative: str, text: str) -> re.Match[str] | None:
    """One alternative in normalised text: ``re:`` a regular expression, else a phrase on
    word boundaries."""
    if alternative.startswith("re:"):
        return re.search(alternative[3:], text, re.IGNORECASE)
    return _phrase(alternative).search(text)


def matches(alternative: str, text: str) -> bool:
    """True when the alternative occurs in the normalised text."""
    return search(alternative, text) is not None


def sentences(text: str) -> list[str]:
    """An answer's sentences, normalised: lines (list items, table rows) split at ``.!?;``,
    never after a month abbreviation or an initial."""
    out: list[str] = []
    for line in text.splitlines():
        current = ""
        for piece in _SENTENCE_END.split(line.strip()):
            current = f"{current} {piece}" if current else piece
            if not _ABBREVIATIONS.search(current):
                out.append(current)
                current = ""
        if current:
            out.append(current)
    return [s for s in (normalise(s) for s in out) if s]
