"""The claim check: numbers and names in an answer that the evidence and the stable facts
never state (SPEC.md, "Claims")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import combinations

from .injection import is_injection
from .text import WORD, fold, is_negated, numbers, plain, sentences

_YEAR = range(1900, 2101)
_SENTENCE_OPENERS = re.compile(r"(?:^|[:;(\"“‘]|\s[-–—]|^\s*(?:[-*•]|\d+[.)]))\s*$")
_IGNORED_NAMES = frozenset({"i", "i'm", "i've", "i'd", "i'll"})
_TRIVIAL_NUMBERS = frozenset({0.0, 1.0})
_DURATION = frozenset({"year", "month", "week", "day", "decade"})


@dataclass(frozen=True)
class Claim:
    """One checkable item of a sentence: a ``number`` or a ``name``, as written."""

    kind: str
    text: str


class Support:
    """What an answer may state: the words of the evidence and the stable facts (less any
    sentence that is itself an injection attempt), each number
    with the terms of the sentences that state it, and the durations derivable from their
    years (differences, counted either way)."""

    def __init__(self, texts: Iterable[str], tokenize: Callable[[str], list[str]],
                 reference_year: int | None = None) -> None:
        self.tokenize = tokenize
        self.words: set[str] = set()
        self.contexts: dict[float, list[frozenset[str]]] = {}
        for text in texts:
            for sentence in sentences(text):
                if is_injection(sentence.text):
                    continue  # an instruction planted in a page is never support
                self.words.update(fold(w) for w in WORD.findall(sentence.text))
                terms = frozenset(_content_terms(tokenize(sentence.text)))
                for _, value in numbers(sentence.text):
                    self.contexts.setdefault(value, []).append(terms)
        years = {int(v) for v in self.contexts if v.is_integer() and int(v) in _YEAR}
        if reference_year is not None:
            years.add(reference_year)
        self.durations = {float(abs(a - b) + d) for a, b in combinations(sorted(years), 2)
                          for d in (-1, 0, 1)}

    def has_number(self, value: float, sentence_terms: frozenset[str]) -> bool:
        """The number is stated in a sentence sharing a term with the claiming sentence, or
        it is a duration between stated years and the sentence speaks of durations."""
        if value in _TRIVIAL_NUMBERS:
            return True
        if any(terms & sentence_terms for terms in self.contexts.get(value, ())):
            return True
        return value in self.durations and not _DURATION.isdisjoint(sentence_terms)

    def has_word(self, word: str) -> bool:
        return fold(word) in self.words


def _content_terms(terms: Iterable[str]) -> list[str]:
    return [t for t in terms if not t.isdigit()]


def is_name(word: str, opener: bool) -> bool:
    """Capitalised words not opening a sentence, and any word with capitals after its first
    letter (``PhD``, ``PWNED``, ``iOS``)."""
    if fold(word) in _IGNORED_NAMES:
        return False
    inner_capital = any(c.isupper() for c in word[1:])
    if inner_capital and sum(c.isalpha() for c in word) >= 2:
        return True
    return word[0].isupper() and not opener


_LIST_MARKER = re.compile(r"^\s*(?:[-*•]\s*)?\d{1,2}[.)]\s+")


def claims(sentence: str) -> list[Claim]:
    """The numbers and name-like words of one sentence, in order (a leading list number is
    not a claim)."""
    text = plain(_LIST_MARKER.sub("", sentence, count=1))
    found = [Claim("number", written) for written, value in numbers(text)
             if value not in _TRIVIAL_NUMBERS]
    for match in WORD.finditer(text):
        for part in match.group(0).split("-"):
            if not part or part[0].isdigit():
                continue
            opener = _SENTENCE_OPENERS.search(text[:match.start()]) is not None
            if is_name(part, opener):
                found.append(Claim("name", part))
    return found


def unsupported(sentence: str, support: Support, question_words: frozenset[str]) -> list[Claim]:
    """The sentence's claims that the support never states.

    A sentence that denies something may name what the question named (``Teo never
    worked at Google``): those words are not claims.
    """
    negated = is_negated(sentence)
    terms = frozenset(_content_terms(support.tokenize(plain(sentence))))
    out: list[Claim] = []
    for claim in claims(sentence):
        if claim.kind == "number":
            value = numbers(claim.text)[0][1]
            ok = support.has_number(value, terms)
        else:
            ok = support.has_word(claim.text)
        if not ok and negated and fold(claim.text) in question_words:
            ok = True
        if not ok:
            out.append(claim)
    return out
