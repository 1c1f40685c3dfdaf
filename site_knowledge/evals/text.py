"""Text handling shared by the battery's validation and its scorer: normalising, matching an
alternative, an answer's sentences (grounding's splitter), and the canned refusals."""

from __future__ import annotations

import re

from site_knowledge.grounding.text import sentences as split_sentences

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


def normalise(text: str) -> str:
    """Lower case, straight quotes and dashes, no markdown emphasis, single spaces."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"').replace("\u2013", "-").replace("\u2014", "-")
    text = re.sub(r"[*_`]+", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _phrase(alternative: str) -> re.Pattern[str]:
    phrase = re.escape(normalise(alternative)).replace(r"\ ", r"\s+")
    return re.compile(rf"(?<!\w){phrase}(?!\w)")


def _pattern(alternative: str) -> re.Pattern[str]:
    if alternative.startswith("re:"):
        return re.compile(alternative[3:], re.IGNORECASE)
    return _phrase(alternative)


def search(alternative: str, text: str) -> re.Match[str] | None:
    """One alternative in normalised text: ``re:`` a regular expression, else a phrase on
    word boundaries."""
    return _pattern(alternative).search(text)


DENIAL = re.compile(r"\b(?:not|never|no)\b|n't\b")
CLAUSE_START = re.compile(r".*(?:[,;:]|\bbut\b)")


def asserted(alternative: str, sentence: str) -> re.Match[str] | None:
    """The first occurrence of an alternative in a normalised sentence that its clause does
    not deny: no "not", "never", "no" or "n't" before it since the clause began (after the
    last comma, semicolon, colon or "but"). "The site does not mention a degree earned at ETH"
    asserts no degree from ETH; "Teo earned a degree at ETH, not at Delft" does."""
    for match in _pattern(alternative).finditer(sentence):
        before = sentence[: match.start()]
        opening = CLAUSE_START.match(before)
        if DENIAL.search(before[opening.end():] if opening else before) is None:
            return match
    return None


def matches(alternative: str, text: str) -> bool:
    """True when the alternative occurs in the normalised text."""
    return search(alternative, text) is not None


def sentences(text: str) -> list[str]:
    """An answer's sentences and list items as grounding splits them, normalised."""
    return [s for s in (normalise(piece.text) for piece in split_sentences(text)) if s]
