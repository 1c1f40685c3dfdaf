"""Answer text as grounding reads it: sentences, words, numbers (SPEC.md, "Text")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from site_knowledge.retrieval.words import WORD

CITATION = re.compile(r"\[(\d{1,3})\]")
_MARKER = re.compile(r"[ \t]?\[\d{1,3}\]")
_URL = re.compile(r"https?://\S+|(?<=\])\([^)\s]*\)")
_CODE = re.compile(r"`[^`\n]*`")
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|approx|ca|cf|no|nr|st|dr|mr|mrs|ms|prof|inc|ltd|"
                           r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)|\b[A-Z])\.$",
                           re.IGNORECASE)
_LIST_NUMBER = re.compile(r"\s*\d{1,3}\.")
NEGATION = re.compile(r"\b(?:not|never|no|none|neither|nor|without|nothing|nowhere)\b|n['’]t\b",
                      re.IGNORECASE)

SAYING = re.compile(r"\b(?:mention(?:s|ed)?|say(?:s)?|said|cover(?:s|ed)?|provide(?:s|d)?|state(?:s|d)?|"
                    r"specif(?:y|ies|ied)|include(?:s|d)?|contain(?:s|ed)?|know|answer)\b", re.IGNORECASE)
SOURCE = re.compile(r"\b(?:I|site|page|pages|information|excerpts?|context|sources?|evidence|"
                    r"documentation)\b", re.IGNORECASE)
"""A sentence declining to answer says what a source (the site, the excerpts, "I") does not
say ("The site does not mention any MBA.", "I don't know.")."""

NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90, "hundred": 100, "thousand": 1000,
}
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(k\b|m\b)?", re.IGNORECASE)


@dataclass(frozen=True)
class Sentence:
    """One sentence of an answer: its text and where it starts and ends in the answer."""

    text: str
    start: int
    end: int


def sentences(answer: str) -> list[Sentence]:
    """Split an answer into sentences and list items (SPEC.md, "Sentences").

    A boundary is a run of newlines, or ``.``, ``!`` or ``?`` (with closing quotes or
    brackets) followed by white space, unless the word before the stop is a known
    abbreviation or a single letter, or the piece so far is a list number (``2.``). Empty
    pieces are dropped.
    """
    out: list[Sentence] = []
    start = 0
    for match in _BOUNDARY.finditer(answer):
        head = answer[start:match.start()]
        if "\n" not in match.group(0) and (_ABBREVIATION.search(head.rstrip("\"')]"))
                                           or _LIST_NUMBER.fullmatch(head)):
            continue
        _append(out, answer, start, match.start())
        start = match.end()
    _append(out, answer, start, len(answer))
    return out


def _append(out: list[Sentence], answer: str, start: int, end: int) -> None:
    piece = answer[start:end]
    stripped = piece.strip()
    if stripped:
        offset = start + piece.index(stripped)
        out.append(Sentence(stripped, offset, offset + len(stripped)))


def plain(text: str) -> str:
    """Text without citation markers, URLs, link targets or the backticks of inline code (the
    code itself stays: an answer that names `CHANGELOG_RETENTION` says something)."""
    return _CODE.sub(lambda m: m.group(0)[1:-1], _URL.sub(" ", _MARKER.sub("", text)))


CITE_PHRASE = re.compile(
    r",?\s+\(?(?:as\s+)?(?:(?:mentioned|stated|described|noted|explained|shown|documented|"
    r"listed|given|covered|discussed|outlined|detailed|defined)\s+(?:in|on|by)|according\s+to|"
    r"see)\s+((?:\[\d{1,3}\]\s*)+)\)?", re.IGNORECASE)
"""A phrase naming its citation as the source ("..., as mentioned in [1].", "(see [2])"): the
markers alone say the same."""
STAND_IN = re.compile(
    r"\b(?:is|are|was|were|be|been|in|at|on|of|to|by|with|for|from|into|via|the|a|an|called|"
    r"named|titled|use|uses|using)\s*(?:\[\d{1,3}\]\s*)+(?=$|[.!?,;:)]|\s+(?:and|or|but|while|"
    r"whereas)\b)", re.IGNORECASE)
"""Markers standing where a word belongs, after a verb, a preposition or an article ("The
package is [1].", "introduces the idea in [1], while ..."): the sentence has a hole."""


def cite_phrases_as_markers(sentence: str) -> str:
    """The sentence with each citation phrase (``CITE_PHRASE``) written as its markers."""
    return CITE_PHRASE.sub(lambda m: " " + m.group(1).strip(), sentence)


def has_stand_in(sentence: str) -> bool:
    """A citation marker stands where a word belongs (``STAND_IN``)."""
    return STAND_IN.search(sentence) is not None


def edited(sentence: str) -> str | None:
    """The sentence as grounding keeps it: its citation phrases written as markers; None
    when a marker stands where a word belongs (the whole sentence goes)."""
    cited = cite_phrases_as_markers(sentence)
    return None if has_stand_in(cited) else cited


_VOWEL = re.compile(r"[aeiouy]")
_UNDOUBLED = frozenset("aeioulsfz")


def inflection_key(term: str) -> str:
    """A term with a regular verb ending folded away, as a quote is matched to the question:
    ``worked``, ``working`` and ``work`` share a key, as do ``lived``/``living``/``live`` and
    ``studied``/``study`` (SPEC.md, "closest sentence")."""
    stem = term
    if len(term) > 4 and term.endswith("ied"):
        stem = term[:-3] + "y"
    elif term.endswith(("ing", "ed")):
        rest = term[:-3] if term.endswith("ing") else term[:-2]
        if len(rest) >= 3 and _VOWEL.search(rest) and not (term.endswith("ed") and rest.endswith("e")):
            stem = rest[:-1] if rest[-1] == rest[-2] and rest[-1] not in _UNDOUBLED else rest
    if len(stem) > 3 and stem.endswith("e"):
        stem = stem[:-1]
    if len(stem) > 3 and stem.endswith("y") and stem[-2] not in "aeiou":
        stem = stem[:-1] + "i"
    return stem


def numbers(text: str) -> list[tuple[str, float]]:
    """Numbers in a text as (as written, value): digits with separators, ``k``/``m``
    suffixes and number words from two upward."""
    found: list[tuple[str, float]] = []
    for match in _NUMBER.finditer(text):
        value = float(match.group(1).replace(",", ""))
        suffix = (match.group(2) or "").lower()
        value *= 1000 if suffix == "k" else 1_000_000 if suffix == "m" else 1
        found.append((match.group(0), value))
    for word in WORD.findall(text):
        value_of_word = NUMBER_WORDS.get(word.lower())
        if value_of_word is not None:
            found.append((word, float(value_of_word)))
    return found


def is_negated(sentence: str) -> bool:
    """The sentence denies something (``not``, ``never``, ``no``, ``n't``, ...)."""
    return NEGATION.search(sentence) is not None


def is_decline(sentence: str) -> bool:
    """The sentence declines to answer (``SAYING``, ``SOURCE``)."""
    return (is_negated(sentence) and SAYING.search(sentence) is not None
            and SOURCE.search(sentence) is not None)


CODE_TOKEN = re.compile(r"`([^`\s]+?)(?:\(\))?`")
"""Inline code of one token (``retry_on``, ``foo()``: the call's brackets apart)."""
IDENTIFIER = re.compile(
    r"(?<![\w./-])(?:[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+|\w+(?:_\w+)+|v?\d+(?:\.\d+){2,}|"
    r"--[A-Za-z][\w-]*)(?![\w-])")
"""Identifiers outside code: dotted names (``rest_framework.authentication``), snake_case
names, versions of three parts or more (``4.0.1``) and long flags (``--no-history``)."""


def identifiers(sentence: str) -> list[str]:
    """A sentence's code identifiers (``CODE_TOKEN``, then ``IDENTIFIER`` outside code and
    URLs), each once, in order."""
    text = _URL.sub(" ", _MARKER.sub("", sentence))
    found = [m.group(1) for m in CODE_TOKEN.finditer(text)]
    found += [m.group(0) for m in IDENTIFIER.finditer(CODE_TOKEN.sub(" ", text))]
    return list(dict.fromkeys(found))


_WORD_CHAR = re.compile(r"\w")


ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
"""Zero-width characters: the gateway breaks control-token shapes in page text with one
(``<\u200bfield_name>``), and a model copies the text without it."""


def occurs(identifier: str, text: str) -> bool:
    """The identifier stands in the text verbatim, not inside a longer word."""
    start = text.find(identifier)
    while start >= 0:
        end = start + len(identifier)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not _WORD_CHAR.match(before) and not _WORD_CHAR.match(after):
            return True
        start = text.find(identifier, start + 1)
    return False


def without_identifiers(sentence: str, found: list[str]) -> str:
    """The sentence with each of the identifiers (longest first) written as the neutral word
    ``code``, so that their parts are not read as names or numbers."""
    for identifier in sorted(found, key=len, reverse=True):
        sentence = sentence.replace(identifier, "code")
    return sentence
