"""The ``sk-words/1`` tokenizer of SPEC.md, shared by the compiler and the Python reader."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

TOKENIZER_VERSION = "sk-words/1"
WORD = re.compile(r"[^\W_]+")

# English function words; words of time and order ("now", "after", "before", "then",
# "during", "until", "again", "once") are kept: on a personal site they carry the question.
STOPWORDS: tuple[str, ...] = (
    "a", "about", "above", "against", "all", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "being", "below", "between",
    "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "each", "few",
    "for", "from", "further", "had", "has", "have", "having", "he", "her",
    "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
    "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor",
    "not", "of", "off", "on", "only", "or", "other", "our", "ours",
    "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such",
    "than", "that", "the", "their", "theirs", "them", "themselves", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "up",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
    "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves",
    "tell", "please", "s", "t", "also", "ever", "much", "many",
)


def fold_plural(token: str) -> str:
    """Fold a plural to its singular the way SPEC.md's step 4 says."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def tokenize(text: str, stopwords: Collection[str] = frozenset(STOPWORDS)) -> list[str]:
    """Split text into ``sk-words/1`` tokens.

    Args:
        text: any text.
        stopwords: words to drop (the artifact's ``lexical.stopwords``).

    Returns:
        The tokens in order, repeats kept.
    """
    folded = unicodedata.normalize("NFKC", text).lower()
    return [
        fold_plural(word)
        for word in WORD.findall(folded)
        if word not in stopwords and (len(word) > 1 or word.isdigit())
    ]


def indexed_text(title: str, heading: str, text: str) -> str:
    """The text a passage is tokenized and embedded as (SPEC.md, "Indexed text")."""
    if heading and heading != title:
        return f"{title} > {heading}: {text}"
    return f"{title}: {text}"
