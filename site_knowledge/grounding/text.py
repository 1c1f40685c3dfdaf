"""Answer text as grounding reads it: sentences, words, numbers (SPEC.md, "Text")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from site_knowledge.retrieval.words import WORD

from .rules import pattern, table

CITATION = pattern("CITATION")
_MARKER = pattern("MARKER")
_URL = pattern("URL")
_CODE = pattern("CODE")
_BOUNDARY = pattern("BOUNDARY")
_ABBREVIATION = pattern("ABBREVIATION")
_LIST_NUMBER = pattern("LIST_NUMBER")
NEGATION = pattern("NEGATION")

SAYING = pattern("SAYING")
SOURCE = pattern("SOURCE")
"""A sentence declining to answer says what a source (the site, the excerpts, "I") does not
say ("The site does not mention any MBA.", "I don't know.")."""
_REPORTED_CLAUSE = pattern("REPORTED_CLAUSE")
"""What a source says, after its verb ("The site states that the step will not take place"):
a negation there is the answer's, not a decline's."""

NUMBER_WORDS = table("NUMBER_WORDS")
_NUMBER = pattern("NUMBER")


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


CITE_PHRASE = pattern("CITE_PHRASE")
"""A phrase naming its citation as the source ("..., as mentioned in [1].", "(see [2])"): the
markers alone say the same."""
STAND_IN = pattern("STAND_IN")
"""Markers standing where a word belongs, after a verb, a preposition or an article ("The
package is [1].", "introduces the idea in [1], while ..."): the sentence has a hole."""


META = pattern("META")
"""A sentence that only says where its answer is written ("This can be seen in excerpt [1].")."""


def is_meta(sentence: str) -> bool:
    """The sentence says only that the excerpts or the documentation state something, and
    denies nothing (``META`` on its plain text)."""
    return not is_negated(sentence) and META.search(plain(sentence)) is not None


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
    """The sentence declines to answer (``SAYING``, ``SOURCE``): negated before any clause it
    reports (``REPORTED_CLAUSE``)."""
    saying = SAYING.search(sentence)
    if saying is None or SOURCE.search(sentence) is None:
        return False
    reported = _REPORTED_CLAUSE.search(sentence, saying.end())
    return is_negated(sentence if reported is None else sentence[:reported.start()])


CODE_TOKEN = pattern("CODE_TOKEN")
"""Inline code of one token (``retry_on``, ``foo()``: the call's brackets apart)."""
IDENTIFIER = pattern("IDENTIFIER")
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


ZERO_WIDTH = pattern("ZERO_WIDTH")
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
