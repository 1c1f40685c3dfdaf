"""Focused evidence: the sentences of the retrieved passages that bear on the question, with
their neighbours, within a character budget.

On two CPU cores the first answer token waits for the model to read the evidence (about 100
tokens a second for the 1.5B), so four whole passages cost five to nine seconds. Most answers
sit in one or two sentences: each sentence (a line, a list item, a table row) is scored by the
share of the question's IDF weight it holds (terms compared by ``inflection_key``) plus its
cosine to the question's embedding, and the best ones go in with a neighbour either side until
the budget is spent, each passage keeping its sentences in their order and `` … `` where it skips.
A passage left with nothing is dropped and the rest renumbered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from site_knowledge.grounding.text import inflection_key, sentences

from .prompt import Evidence

GAP = " … "
"""Written where a passage skips sentences."""
HISTORY_WEIGHT = 0.5
"""How much a term of the previous question counts against one of the question itself."""
NEIGHBOURS = 1
DENSE_WEIGHT = 1.0


@dataclass(frozen=True)
class Lexical:
    """The artifact's tokenizer and IDF, as focus reads them."""

    terms: Callable[[str], list[str]]
    idf: Callable[[str], float]


def units(text: str) -> list[str]:
    """A passage's sentences as written, in order, each with the stop and the white space
    after it (so that neighbours joined again read as the page wrote them)."""
    found = sentences(text)
    ends = [s.start for s in found[1:]] + [len(text)]
    return [text[s.start:end] for s, end in zip(found, ends, strict=True)]


def question_weights(lexical: Lexical, question: str, history: Sequence[str]
                     ) -> dict[str, float]:
    """Each question term's inflection key and IDF weight; the previous question's terms at
    ``HISTORY_WEIGHT`` (a follow-up's "it")."""
    weights: dict[str, float] = {}
    for term in lexical.terms(question):
        key = inflection_key(term)
        weights[key] = max(weights.get(key, 0.0), lexical.idf(term))
    for term in lexical.terms(history[-1]) if history else ():
        weights.setdefault(inflection_key(term), HISTORY_WEIGHT * lexical.idf(term))
    return weights


def scores(lexical: Lexical, weights: dict[str, float], pieces: Sequence[str],
           similarity: npt.NDArray[np.float32] | None) -> list[float]:
    """Each piece's share of the question's weight, plus its cosine to the question."""
    total = sum(weights.values()) or 1.0
    out = []
    for i, piece in enumerate(pieces):
        own = {inflection_key(t) for t in lexical.terms(piece)}
        share = sum(w for key, w in weights.items() if key in own) / total
        out.append(share + (DENSE_WEIGHT * float(similarity[i]) if similarity is not None else 0.0))
    return out


def focus(evidence: Sequence[Evidence], question: str, history: Sequence[str],
          lexical: Lexical, budget_chars: int,
          embed: Callable[[Sequence[str]], npt.NDArray[np.float32]] | None = None,
          ) -> list[Evidence]:
    """The evidence cut to the sentences nearest the question, at most ``budget_chars``
    characters of text in all (at least the best sentence), renumbered from 1.

    ``embed`` maps texts to unit vectors, the question's first; without it sentences are
    scored on their terms alone."""
    pieces = [units(e.text) for e in evidence]
    flat = [p for passage in pieces for p in passage]
    if not flat:
        return list(evidence)
    weights = question_weights(lexical, question, history)
    similarity = None
    if embed is not None:
        vectors = embed([question, *flat])
        similarity = vectors[1:] @ vectors[0]
    scored = iter(scores(lexical, weights, flat, similarity))
    ranked = sorted(((-next(scored), rank, i) for rank, passage in enumerate(pieces)
                     for i in range(len(passage))))
    kept: list[set[int]] = [set() for _ in evidence]
    used = 0
    for _, rank, i in ranked:
        near = [j for j in range(i - NEIGHBOURS, i + NEIGHBOURS + 1)
                if 0 <= j < len(pieces[rank]) and j not in kept[rank]]
        for j in sorted(near, key=lambda j: abs(j - i)):
            size = len(pieces[rank][j])
            if used + size <= budget_chars:
                kept[rank].add(j)
                used += size
        if used >= budget_chars:
            break
    if not used:
        _, rank, i = ranked[0]
        pieces[rank][i] = pieces[rank][i][:budget_chars]
        kept[rank].add(i)
    out: list[Evidence] = []
    for e, passage, chosen in zip(evidence, pieces, kept, strict=True):
        if chosen:
            out.append(replace(e, n=len(out) + 1, text=_joined(passage, sorted(chosen))))
    return out


def _joined(passage: Sequence[str], chosen: Sequence[int]) -> str:
    """The chosen sentences in order, neighbours as the page wrote them, ``GAP`` where
    sentences are skipped."""
    text = ""
    for k, j in enumerate(chosen):
        if k and j != chosen[k - 1] + 1:
            text = text.rstrip() + GAP
        text += passage[j]
    return text.rstrip()
