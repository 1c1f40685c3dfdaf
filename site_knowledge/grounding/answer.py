"""Grounding one finished answer: drop repeats and unsupported sentences, fix markers,
attribute citations (SPEC.md, "Grounding an answer")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from site_knowledge.retrieval.words import IGNORED_NAMES, WORD, fold

from .affirmation import CHECKS, ENDED, LASTING, ONGOING
from .attribution import Lexicon, attribute, valid_markers
from .claims import Claim, Support, unsupported
from .evidence import Passage
from .injection import planted
from .premises import correction
from .rules import count, pattern, phrase, share
from .text import (
    CITATION,
    Sentence,
    cite_phrases_as_markers,
    edited,
    inflection_key,
    is_decline,
    is_meta,
    is_negated,
    plain,
    sentences,
)

_MARKERS = pattern("ANSWER_MARKERS")


@dataclass(frozen=True)
class Grounded:
    """The answer as the visitor should read it, and what grounding did to it."""

    text: str
    """The answer to show; equal to the model's text when nothing changed."""
    cited: list[int]
    """1-based evidence numbers the answer draws on, in order of first use."""
    changed: bool
    """The text differs from what was streamed."""
    grounded: bool
    """False when unsupported claims had to be removed."""
    removed: list[Claim] = field(default_factory=list)
    """The unsupported claims, for tests and evals (never logged)."""
    fact_cited: list[int] = field(default_factory=list)
    """1-based numbers of the fact passages (``Context.fact_passages``) cited for sentences no
    evidence passage holds, in order of first use."""
    declined: str | None = None
    """Why the answer, as it stands, declines to answer: ``unsupported`` (grounding replaced
    it: nothing it claimed held), ``model`` (every sentence the model wrote declines), or None
    for an answer. A declined answer is a refusal to the visitor, the box and the metrics."""


@dataclass
class Context:
    """What an answer is checked against."""

    evidence: Sequence[Passage]
    """The evidence passages, numbered from 1."""
    support: Support
    question: str
    lexicon: Lexicon
    premise_terms: Sequence[str] = ()
    """The question's words that the site never uses (``SiteWords.unknown_terms``)."""
    facts: str = ""
    """The stable facts of the system prompt (support for a yes, as for claims)."""
    site_terms: frozenset[str] = frozenset()
    """The terms of the site's name, which a yes need not find in the evidence."""
    fact_passages: Sequence[Passage] = ()
    """The passages the stable facts are written from (the site's structured facts): a
    sentence that no evidence passage holds is cited to the one that holds it."""

    @cached_property
    def question_terms(self) -> list[str]:
        return self.lexicon.tokenize(self.question)

    @cached_property
    def passages(self) -> list[frozenset[str]]:
        """Each evidence passage's terms (label and text)."""
        return [frozenset(self.lexicon.tokenize(p.whole)) for p in self.evidence]

    @cached_property
    def fact_passage_terms(self) -> list[frozenset[str]]:
        return [frozenset(self.lexicon.tokenize(p.whole)) for p in self.fact_passages]

    @cached_property
    def facts_terms(self) -> frozenset[str]:
        """The stable facts' terms (a sentence they hold is not unattributed)."""
        return frozenset(self.lexicon.tokenize(self.facts))

    @cached_property
    def quote_terms(self) -> list[str]:
        """The question's terms a quote is scored on: those the evidence holds in some
        inflection (``inflection_key``), the site's name left out, in question order."""
        held = {inflection_key(t) for t in frozenset().union(*self.passages)}
        return [t for t in dict.fromkeys(self.question_terms)
                if t not in self.site_terms and inflection_key(t) in held]


def ground(answer: str, context: Context, check_claims: bool = True) -> Grounded:
    """Check a finished answer against its evidence and the stable facts.

    Repeated sentences are dropped (small models loop), and so is a sentence that only
    says where the answer is written ("This can be seen in excerpt [1]."); a citation phrase ("as mentioned in
    [1]") becomes its markers, and a sentence whose marker stands where a word belongs ("The
    package is [1].") is dropped whole: grounding edits sentences, never words inside
    them. With the claim check, a name cut short
    is written whole (``Support.completed``) and sentences with numbers or names that the
    support never states are removed; model-written ``[n]`` that point at a passage without
    the sentence's words are dropped; each remaining sentence is attributed to the passages
    holding its words, or, when none does, to the fact passage that does. When nothing
    supported remains, or the answer affirms a premise of the question that no one place of
    the evidence holds together, the answer says it cannot answer reliably and quotes the
    evidence sentence closest to the question, cited.
    """
    for kind, check in CHECKS if check_claims else ():
        said = check(answer, context.question, context.evidence, context.facts,
                     context.lexicon.tokenize, context.site_terms)
        if said is not None:
            return _replacement(context, [Claim(kind, said)])
    question_words = frozenset(fold(w) for w in WORD.findall(context.question))
    question_terms = frozenset(t for t in context.question_terms if not t.isdigit())
    premises = frozenset(fold(t) for t in context.premise_terms)
    kept: list[Sentence] = []
    removed: list[Claim] = []
    seen: set[str] = set()
    dropped = rewritten = False
    split = sentences(answer)
    for sentence in split:
        key = " ".join(plain(sentence.text).lower().split())
        if key in seen or (len(split) > 1 and is_meta(sentence.text)):
            dropped = True
            continue
        seen.add(key)
        kept_as = edited(sentence.text)
        if kept_as is None:
            removed.append(Claim("stand-in", cite_phrases_as_markers(sentence.text)))
            dropped = True
            continue
        if kept_as != sentence.text:
            sentence = Sentence(kept_as, sentence.start, sentence.end)
            rewritten = True
        completed = context.support.completed(sentence.text) if check_claims else sentence.text
        if completed != sentence.text:
            sentence = Sentence(completed, sentence.start, sentence.end)
            rewritten = True
        bad = (unsupported(sentence.text, context.support, question_words, question_terms,
                           context.site_terms, premises)
               if check_claims else [])
        if bad:
            removed.extend(bad)
            dropped = True
            continue
        kept.append(sentence)
    if removed and not any(_informative(s, context) for s in kept):
        return _replacement(context, removed)
    cited: list[int] = []
    fact_cited: list[int] = []
    pieces: list[str] = []
    for sentence in kept:
        own = [int(m) for m in CITATION.findall(sentence.text)]
        valid = valid_markers(sentence.text, context.passages, context.lexicon)
        found = [*valid, *(n for n in attribute(sentence.text, context.passages, context.lexicon,
                                                context.question_terms) if n not in valid)]
        text = sentence.text
        if own and own != valid:
            text = _remark(text, found)
            rewritten = True
        pieces.append(text)
        cited.extend(n for n in found if n not in cited)
        if not found and not is_negated(sentence.text):
            fact_cited.extend(n for n in attribute(sentence.text, context.fact_passage_terms,
                                                   context.lexicon, context.question_terms)[:1]
                              if n not in fact_cited)
    unattributed = [Claim("unattributed", s.text.strip()) for s in kept
                    if _asserts(s, context)] if check_claims and not cited else []
    if unattributed:
        return _replacement(context, [*removed, *unattributed])
    text = _join(answer, kept, pieces) if dropped or rewritten else answer
    correction = _premise_correction(context, text)
    if correction:
        text = f"{correction} {text}".strip()
    declines = bool(kept) and all(is_decline(s.text) for s in kept)
    nearest = decline_note(context) if declines else None
    if nearest is not None:
        text = f"{text} {nearest[0]}"
        cited = [*cited, nearest[1]] if nearest[1] not in cited else cited
    declined = "model" if declines else None
    if not dropped and not rewritten and not correction and nearest is None:
        return Grounded(answer, cited, changed=False, grounded=True, fact_cited=fact_cited,
                        declined=declined)
    return Grounded(text, cited, changed=True, grounded=not removed, removed=removed,
                    fact_cited=fact_cited, declined=declined)


def _premise_correction(context: Context, answer: str) -> str:
    """``The site does not mention A or B.`` for the question's premise terms that the answer
    does not deny (no negated sentence of it names them); empty when there are none."""
    denied = {fold(w) for s in sentences(answer) if is_negated(s.text)
              for w in WORD.findall(s.text)}
    return correction([t for t in context.premise_terms if fold(t) not in denied])


def _asserts(sentence: Sentence, context: Context) -> bool:
    """The sentence states something of its own that the stable facts do not hold either: it
    is not negated, holds a term that is neither the question's nor a bare reply word
    (``yes``, ``sure``, ...), and is not attributed to the facts as to a passage."""
    if is_negated(sentence.text):
        return False
    asked = frozenset(context.question_terms) | IGNORED_NAMES
    return (any(t not in asked for t in context.lexicon.tokenize(plain(sentence.text)))
            and not attribute(sentence.text, [context.facts_terms], context.lexicon,
                              context.question_terms))


def _informative(sentence: Sentence, context: Context) -> bool:
    """The sentence says something the evidence holds (it is attributed to a passage)."""
    return bool(attribute(sentence.text, context.passages, context.lexicon))


def _remark(text: str, numbers: list[int]) -> str:
    """The sentence with its markers replaced by ``numbers``, placed before its final stop."""
    bare = _MARKERS.sub("", text).rstrip()
    marks = "".join(f" [{n}]" for n in numbers)
    if bare and bare[-1] in ".!?":
        return bare[:-1] + marks + bare[-1]
    return bare + marks


def _join(answer: str, kept: list[Sentence], pieces: list[str]) -> str:
    """The kept sentences with the separators the answer had between them."""
    out = ""
    previous_end: int | None = None
    for sentence, piece in zip(kept, pieces, strict=True):
        if previous_end is not None:
            gap = answer[previous_end:sentence.start]
            out += "\n" if "\n" in gap else " "
        out += piece
        previous_end = sentence.end
    return out.strip()


UNSUPPORTED = phrase("UNSUPPORTED")
"""The opening of an answer whose every claim failed the check."""
QUOTE_MIN_WORDS = count("QUOTE_MIN_WORDS")


def _replacement(context: Context, removed: list[Claim]) -> Grounded:
    """The premise correction or ``UNSUPPORTED``, then what the evidence nearest the question
    says (``nearest_note``), cited."""
    opening = _premise_correction(context, "") or UNSUPPORTED
    nearest = nearest_note(context)
    if nearest is None:
        return Grounded(opening, [], changed=True, grounded=False, removed=removed,
                        declined="unsupported")
    return Grounded(f"{opening} {nearest[0]}", [nearest[1]], changed=True, grounded=False,
                    removed=removed, declined="unsupported")


RELEVANT_SHARED = count("RELEVANT_SHARED")
RELEVANT_SHARE = share("RELEVANT_SHARE")
"""A declining answer is followed by the closest evidence sentence, and fiction is named, only
when the sentence shares at least this many of the question's terms, holding this share of
their IDF weight (``decline_note``)."""
FICTION_NOTE = phrase("FICTION_NOTE")
"""Said, with the fiction's marker, when a fiction sentence is nearer the question than any
other (fiction is never quoted)."""


@dataclass(frozen=True)
class Quote:
    """An evidence sentence near the question."""

    n: int
    """Its passage's 1-based number."""
    text: str
    shared: int
    """How many of the question's terms it holds."""


def decline_note(context: Context) -> tuple[str, int] | None:
    """The nearest note that follows an answer that only declines: one meeting the relevance
    thresholds, or any when the question names the site (a term of its name) and something it
    never mentions (a premise term): the decline denies a false premise about the site, and
    what the site does state follows it as it follows a replaced answer ("The site does not
    mention any MBA thesis." is followed by the bachelor's thesis it states). A question about
    something else ("Who won the 2018 football World Cup?") keeps the thresholds."""
    if context.premise_terms and not context.site_terms.isdisjoint(context.question_terms):
        return nearest_note(context)
    return nearest_note(context, RELEVANT_SHARED, RELEVANT_SHARE)


def nearest_note(context: Context, min_shared: int = 1, min_share: float = 0.0
                 ) -> tuple[str, int] | None:
    """What to add after an answer that cannot stand, and the passage it cites: the closest
    sentence (``The closest it comes: …``), or ``FICTION_NOTE`` when a fiction sentence holds
    more of the question (and the relevance thresholds) than any other; None for neither."""
    fact = _closest(context, min_shared, min_share)
    story = _closest(context, RELEVANT_SHARED, RELEVANT_SHARE, fiction=True)
    if story is not None and (fact is None or story.shared > fact.shared):
        return FICTION_NOTE.format(context.evidence[story.n - 1].label) + f" [{story.n}]", story.n
    if fact is None:
        return None
    return f"The closest it comes: {fact.text} [{fact.n}]", fact.n


def _closest(context: Context, min_shared: int = 1, min_share: float = 0.0,
             fiction: bool = False) -> Quote | None:
    """The sentence of a non-fiction evidence text (``fiction``: of a fiction text) sharing
    the most of ``Context.quote_terms``, read with its passage's label (a sentence about
    "downtime" under "pg-shadow: rehearsing a Postgres upgrade" is about the upgrade), or None
    when none shares ``min_shared`` of them itself, holding ``min_share`` of their IDF weight
    (planted text never counts). For a question
    asking whether something lasts ("Does Teo still live in Zurich?") or presuming it ended
    ("Why did Teo leave Fennec?"), a sentence saying what lasts ("... since April 2023")
    comes first, and one term of the question is enough for it (no threshold)."""
    question_terms = context.quote_terms
    asked = [(t, inflection_key(t)) for t in question_terms]
    weight = sum(context.lexicon.idf(t) for t in question_terms)
    ongoing_first = any(p.search(context.question) is not None for p in (LASTING, ENDED))
    best: tuple[tuple[bool, int], Quote] | None = None
    for n, passage in enumerate(context.evidence, start=1):
        if passage.fiction != fiction:
            continue
        label = {inflection_key(t) for t in context.lexicon.tokenize(passage.label)}
        for sentence, is_planted in planted(passage.text):
            if len(sentence.text.split()) < QUOTE_MIN_WORDS or is_planted:
                continue
            own = {inflection_key(t) for t in context.lexicon.tokenize(sentence.text)}
            shared = [t for t, key in asked if key in own]
            share = sum(context.lexicon.idf(t) for t in shared) / weight if weight else 0.0
            lasts = ongoing_first and ONGOING.search(sentence.text) is not None
            if not shared or (not lasts and (len(shared) < min_shared or share < min_share)):
                continue
            read = own | label
            rank = (lasts, sum(1 for _, key in asked if key in read))
            if best is None or rank > best[0]:
                best = (rank, Quote(n, sentence.text, len(shared)))
    return None if best is None else best[1]
