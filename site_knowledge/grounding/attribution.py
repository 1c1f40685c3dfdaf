"""Citations by attribution: each answer sentence is matched to the evidence passages that
hold its words, weighted by how rare each word is on the site (SPEC.md, "Attribution")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .rules import count, pattern, share
from .text import CITATION, plain

PREAMBLE = pattern("PREAMBLE")
"""A sentence's opening about where it read something ("According to the information
provided in excerpt, ..."): words about the source, not the content, left out of attribution
(they are rare on a site, so they outweighed the content's words)."""

MIN_SUPPORT = share("MIN_SUPPORT")
"""Least IDF-weighted share of a sentence's terms a passage must hold to be cited."""
MIN_SHARED = count("MIN_SHARED")
"""Least number of distinct terms a cited passage shares with the sentence."""
NEAR_BEST = share("NEAR_BEST")
"""Other passages are cited too when their support is at least this share of the best."""
KEEP_MARKER = share("KEEP_MARKER")
"""A model-written ``[n]`` is kept when passage n holds at least this share."""


@dataclass(frozen=True)
class Lexicon:
    """The site's tokenizer and term weights, as the retrieval index has them."""

    tokenize: Callable[[str], list[str]]
    idf: Callable[[str], float]


def attributed_terms(sentence: str, lexicon: Lexicon) -> list[str]:
    """The sentence's terms, its ``PREAMBLE`` left out."""
    return lexicon.tokenize(PREAMBLE.sub("", plain(sentence), count=1))


def support(sentence_terms: Sequence[str], passage_terms: frozenset[str],
            lexicon: Lexicon) -> tuple[float, int]:
    """The IDF-weighted share of the sentence's distinct terms the passage holds, and how
    many distinct terms they share."""
    distinct = list(dict.fromkeys(sentence_terms))
    total = sum(lexicon.idf(t) for t in distinct)
    shared = [t for t in distinct if t in passage_terms]
    if total == 0.0:
        return 0.0, 0
    return sum(lexicon.idf(t) for t in shared) / total, len(shared)


TERSE = count("TERSE")
"""A sentence with fewer distinct terms ("4", "Berlin, Germany") answers its question: the
question's terms join its own for attribution."""


def attribute(sentence: str, passages: Sequence[frozenset[str]], lexicon: Lexicon,
              question_terms: Sequence[str] = ()) -> list[int]:
    """1-based numbers of the passages a sentence draws on, best first (empty if none)."""
    terms = attributed_terms(sentence, lexicon)
    if len(set(terms)) < TERSE:
        terms = [*terms, *question_terms]
    scored = []
    for n, passage_terms in enumerate(passages, start=1):
        share, count = support(terms, passage_terms, lexicon)
        if share >= MIN_SUPPORT and count >= MIN_SHARED:
            scored.append((share, n))
    if not scored:
        return []
    best = max(share for share, _ in scored)
    return [n for share, n in sorted(scored, key=lambda s: (-s[0], s[1])) if share >= NEAR_BEST * best]


def valid_markers(sentence: str, passages: Sequence[frozenset[str]], lexicon: Lexicon) -> list[int]:
    """The sentence's own ``[n]`` markers that point at a passage holding its words."""
    terms = attributed_terms(sentence, lexicon)
    kept: list[int] = []
    for match in CITATION.finditer(sentence):
        n = int(match.group(1))
        if 1 <= n <= len(passages) and n not in kept \
                and support(terms, passages[n - 1], lexicon)[0] >= KEEP_MARKER:
            kept.append(n)
    return kept
