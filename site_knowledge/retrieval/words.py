"""The site's words: which names of a question the whole site never uses (the grounding
spec's "Words" and "Premises"; this spec's "Premise names"). Ranking leaves those names out;
grounding, above retrieval, names them to the model and corrects the answer."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from site_knowledge.retrieval.tokenizer import fold_plural

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
"""A word as grounding reads it: letters and digits, inner apostrophes kept (``Teo's``)."""
IGNORED_NAMES = frozenset({"i", "i'm", "i've", "i'd", "i'll", "yes", "no", "yeah", "sure", "ok",
                           "okay", "correct", "indeed", "note", "none", "nothing", "unknown"})
"""Capitalised words that are never names."""
STEM = 4
"""A word counts as used when a site word shares its first ``max(STEM, len - 3)`` letters."""


def fold(word: str) -> str:
    """A word as claims compare it: lower case without diacritics (NFKD, combining marks
    dropped, then NFKC), no possessive, plural folded."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    word = unicodedata.normalize("NFKC", bare).lower().replace("’", "'")
    return fold_plural(word[:-2] if word.endswith("'s") else word)


def is_name(word: str, opener: bool) -> bool:
    """Capitalised words not opening a sentence, and any word with capitals after its first
    letter (``PhD``, ``PWNED``, ``iOS``)."""
    if fold(word) in IGNORED_NAMES:
        return False
    inner_capital = any(c.isupper() for c in word[1:])
    if inner_capital and sum(c.isalpha() for c in word) >= 2:
        return True
    return word[0].isupper() and not opener


class SiteWords:
    """The site's vocabulary (tokenizer terms, folded as claims fold words) with every stem
    prefix, built once."""

    def __init__(self, vocabulary: Collection[str], stopwords: Collection[str]) -> None:
        self.stopwords = frozenset(stopwords)
        folded = {fold(term) for term in vocabulary}
        self.prefixes = frozenset(
            term[:n] for term in folded for n in range(STEM, len(term) + 1)
        ) | frozenset(folded)

    def uses(self, word: str) -> bool:
        """The site uses the word or a word of the same stem."""
        folded = fold(word)
        return folded[: max(STEM, len(folded) - 3)] in self.prefixes or folded in self.prefixes

    def unknown_terms(self, question: str) -> list[str]:
        """Names in the question (capitalised after the first word, or with inner capitals)
        that the site never uses, as the visitor wrote them. Common words are left out: a
        site that never says "achievement" can still answer a question that does."""
        out: list[str] = []
        for index, match in enumerate(WORD.finditer(question)):
            word = match.group(0)
            if (not is_name(word, opener=index == 0) or fold(word) in self.stopwords
                    or any(c.isdigit() for c in word) or self.uses(word)):
                continue
            if word not in out:
                out.append(word)
        return out

    def without_unknown(self, question: str) -> str:
        """The question less its ``unknown_terms``, spaces collapsed: what ranking reads, so
        that a name the site never uses does not pull the passages towards whatever sounds
        like it (SPEC.md, "Premise names")."""
        unknown = set(self.unknown_terms(question))
        if not unknown:
            return question
        kept = WORD.sub(lambda match: "" if match.group(0) in unknown else match.group(0), question)
        return " ".join(kept.split())
