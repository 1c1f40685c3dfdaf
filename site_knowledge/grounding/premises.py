"""The premise notice: salient words of a question that the whole site never uses
(SPEC.md, "Premises")."""

from __future__ import annotations

from collections.abc import Collection

from .claims import is_name
from .text import WORD, fold

STEM = 4
"""A word counts as used when a site word shares its first ``max(STEM, len - 3)`` letters."""


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


def notice(terms: Collection[str]) -> str:
    """The line the answer prompt carries when the question uses words the site never does."""
    return "The site never mentions: " + ", ".join(terms) + "." if terms else ""


def correction(terms: Collection[str]) -> str:
    """``The site does not mention A or B.``, said of premise terms; empty for none."""
    return f"The site does not mention {' or '.join(terms)}." if terms else ""
