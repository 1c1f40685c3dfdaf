"""The ``sk-words/2`` tokenizer of SPEC.md, shared by the compiler and the Python reader."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection

TOKENIZER_VERSION = "sk-words/2"
WORD = re.compile(r"[^\W_]+")
CJK = re.compile(
    "([\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303c\u3041-\u30ff"
    "\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff"
    "\uf900-\ufaff\U00020000-\U0003ffff]+)")
"""Runs of Han, Hiragana, Katakana and Hangul (SPEC.md, tokenizer step 3): written without
spaces between words, so they are read as overlapping character pairs."""

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


def bigrams(run: str) -> list[str]:
    """A CJK run as its overlapping character pairs; a lone character stays itself."""
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)]


def tokenize(text: str, stopwords: Collection[str] = frozenset(STOPWORDS)) -> list[str]:
    """Split text into ``sk-words/2`` tokens.

    Args:
        text: any text.
        stopwords: words to drop (the artifact's ``lexical.stopwords``).

    Returns:
        The tokens in order, repeats kept.
    """
    dropped = stopwords if isinstance(stopwords, frozenset) else frozenset(stopwords)
    tokens: list[str] = []
    for run in _word_runs(text):
        tokens.extend(_run_tokens(run, dropped))
    return tokens


ASCII_RUNS = {code: (chr(code).lower() if chr(code).isalnum() else " ") for code in range(128)}
"""Lowercase an ASCII letter or digit, blank every other ASCII character: on ASCII text,
``str.translate`` with it then ``split`` gives `WORD`'s runs about twice as fast."""


def _word_runs(text: str) -> list[str]:
    """The runs of word characters (not ``_``) of the NFKC-normalised, lowercased text."""
    if text.isascii():
        return text.translate(ASCII_RUNS).split()
    return WORD.findall(unicodedata.normalize("NFKC", text).lower())


@functools.lru_cache(maxsize=1 << 16)
def _run_tokens(run: str, stopwords: frozenset[str]) -> tuple[str, ...]:
    """The tokens of one run of word characters (memoised: a site repeats its words)."""
    tokens: list[str] = []
    for index, part in enumerate(CJK.split(run)):
        if index % 2:
            tokens.extend(bigrams(part))
        elif part and part not in stopwords and (len(part) > 1 or part.isdigit()):
            tokens.append(fold_plural(part))
    return tuple(tokens)


def indexed_text(title: str, heading: str, text: str) -> str:
    """The text a passage is tokenized and embedded as (SPEC.md, "Indexed text")."""
    if heading and heading != title:
        return f"{title} > {heading}: {text}"
    return f"{title}: {text}"
