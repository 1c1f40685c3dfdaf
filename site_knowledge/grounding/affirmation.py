"""Answers that affirm a question's premise where no one place of the evidence or the stable
facts holds it together (SPEC.md, "Affirmations").

"Is tidewater written in Go?" answered "Yes, tidewater is written in Go." passes the claim
check on a site that names Go in a skills list and tidewater on a project page; what the
site never does is say the two together. The same holds for a question that is not yes/no:
"Why did Teo move to Vienna in 2021?" answered "Teo moved to Vienna in 2021 because ..."
restates a pairing of names the site never makes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from site_knowledge.retrieval.words import STEM, WORD, is_name

from .claims import CLAUSE
from .injection import planted
from .rules import count, pattern, table
from .text import is_negated, plain, sentences

if TYPE_CHECKING:
    from .evidence import Passage

POLAR = pattern("POLAR")
"""A yes/no question opens with an auxiliary verb (after an optional "and", "so", ...)."""
AFFIRMATIVE = pattern("AFFIRMATIVE")
"""An answer's first sentence that opens like this says yes."""
DENYING = pattern("DENYING")
"""A clause that says this about all the asked terms denies them ("Mira is not looking for a new
job"); "no" and "without" seldom deny the clause's verb ("downsamples without that lie")."""
LASTING = pattern("LASTING")
"""A yes/no question with one of these asks whether something lasts ("Does Teo still live in
Zurich?"): a yes needs a window that says it does, not one that it once did."""
ENDED = pattern("ENDED")
"""A question with one of these presumes something ended ("Why did Teo leave Fennec?",
"When did he move from Vienna?"): a sentence saying it lasts corrects it."""
ONGOING = pattern("ONGOING")
"""A window with one of these says something lasts ("lives in Vienna, since April 2023")."""
ONGOING_TERM = "\u2192ongoing"
"""Put in a window's terms when its text says something lasts (no tokenizer makes it)."""
ENDED_TERM = "\u2192ended"
"""Put in a window's terms when its text says something ended (``ENDED``)."""
NEAR = count("NEAR")
"""A window is an evidence sentence with up to this many sentences either side on its line
(and its passage's label): "He moved to Vienna. He has lived there since 2023." holds
together; two rows of a table do not."""
EXACT_ONLY = count("EXACT_ONLY")
"""Terms of at most this many letters (``go``, ``pg``) match only themselves; longer terms
match a window term starting with their first ``max(STEM, length - 3)`` letters (``write``
and ``writing``), as premise terms match site words."""
IRREGULAR = table("IRREGULAR")
"""Irregular verb forms, read as their base form on both sides (``won`` matches ``win``)."""

SPARE_EVERY = count("SPARE_EVERY")
"""For every this many asked terms, one plain word (not a name or a number) may be missing
from the window: the site says "gave me the award" where the visitor asks whether he won it."""

PAIRED = count("PAIRED")
"""A question that is not yes/no needs this many names (the site's own aside) for its answer's
restatement of them to be checked."""

Tokenize = Callable[[str], list[str]]


def base(term: str) -> str:
    """A term with an irregular verb form read as its base form."""
    return IRREGULAR.get(term, term)


def _base_terms(text: str, tokenize: Tokenize) -> frozenset[str]:
    """The tokens of a text's plain form, each in base form."""
    return frozenset(base(t) for t in tokenize(plain(text)))


def _without_site(terms: Iterable[str], site_terms: Iterable[str]) -> list[str]:
    """The terms, in order and once each, less the site's own name's."""
    own = {base(t) for t in site_terms}
    return [t for t in dict.fromkeys(terms) if t not in own]


def asked_terms(question: str, tokenize: Tokenize, site_terms: Iterable[str] = ()) -> list[str]:
    """The terms a yes must find together: those of a yes/no question's first clause (the
    yes/no part of "Is Teo married, and what is his partner's name?") after its auxiliary
    verb, in base form, less the terms of the site's own name (a personal site seldom repeats
    its owner's name); empty when the question is not a yes/no question."""
    polar = POLAR.search(question)
    if polar is None:
        return []
    clause = CLAUSE.split(question[polar.end():], maxsplit=1)[0]
    return _without_site((base(t) for t in tokenize(plain(clause))), site_terms)


def named_terms(question: str, tokenize: Tokenize) -> frozenset[str]:
    """The terms, in base form, of the question's names (capitalised words after the first,
    words with inner capitals) and of its words with digits: a window may never lack one."""
    words = [w for i, w in enumerate(WORD.findall(plain(question)))
             if any(c.isdigit() for c in w) or (i > 0 and is_name(w, opener=False))]
    return frozenset(base(t) for w in words for t in tokenize(w))


def holds(term: str, window: frozenset[str]) -> bool:
    """The window has the term or, for a term longer than ``EXACT_ONLY`` letters, a term
    starting with its stem."""
    if term in window:
        return True
    if len(term) <= EXACT_ONLY:
        return False
    stem = term[:max(STEM, len(term) - 3)]
    return any(w.startswith(stem) for w in window)


def holds_all(terms: Iterable[str], window: frozenset[str]) -> bool:
    """The window holds every one of the terms."""
    return all(holds(t, window) for t in terms)


def confirms(window: frozenset[str], terms: Sequence[str], named: frozenset[str]) -> bool:
    """The window holds every asked term but at most one plain word in ``SPARE_EVERY``."""
    missing = [t for t in terms if not holds(t, window)]
    return len(missing) <= len(terms) // SPARE_EVERY and named.isdisjoint(missing)


def windows(evidence: Sequence[Passage], facts: str, tokenize: Tokenize, near: int = NEAR,
            labels: bool = True, across_lines: bool = False
            ) -> tuple[list[frozenset[str]], list[frozenset[str]]]:
    """The term sets that may confirm a yes and those that may deny it. Each sentence of a
    non-fiction passage or of the stable facts that was not planted makes a window with up
    to ``near`` such sentences either side on its line (a paragraph; list items and table
    rows stand alone; with ``across_lines``, in its evidence passage: documentation writes
    the code line under the sentence that explains it) and its passage's label (unless
    ``labels`` is false), and ``ONGOING_TERM`` when one of its sentences says something
    lasts (``ENDED_TERM`` when one says something ended); each of its clauses that says
    ``not``, ``never`` or ``n't`` may deny it."""
    found: list[frozenset[str]] = []
    denied: list[frozenset[str]] = []
    for label, text, spans in [*((p.label, p.text, across_lines)
                                 for p in evidence if not p.fiction), ("", facts, False)]:
        head = _base_terms(label, tokenize) if labels else frozenset()
        for run in [text] if spans else text.split("\n"):
            own: list[frozenset[str]] = []
            for sentence, is_planted in planted(run):
                if is_planted:
                    continue
                marks = {mark for mark, pattern in ((ONGOING_TERM, ONGOING), (ENDED_TERM, ENDED))
                         if pattern.search(sentence.text)}
                own.append(_base_terms(sentence.text, tokenize) | marks)
                denied += [_base_terms(clause, tokenize)
                           for clause in CLAUSE.split(sentence.text) if DENYING.search(clause)]
            found += [head.union(*own[max(0, i - near):i + near + 1]) for i in range(len(own))]
    return found, denied


def affirming(answer: str, terms: Sequence[str], tokenize: Tokenize) -> str | None:
    """The answer's first sentence when it says yes: it opens with a yes, or it is not
    negated and restates every asked term (at least two)."""
    first = next(iter(sentences(answer)), None)
    if first is None or not terms:
        return None
    if AFFIRMATIVE.search(first.text):
        return first.text
    if (len(terms) >= 2 and not is_negated(first.text)
            and holds_all(terms, _base_terms(first.text, tokenize))):
        return first.text
    return None


def unconfirmed_yes(answer: str, question: str, evidence: Sequence[Passage], facts: str,
                    tokenize: Tokenize, site_terms: Iterable[str] = ()) -> str | None:
    """The sentence in which an answer says yes to a yes/no question that a denying clause
    holds every asked term of, or that no window confirms; ``None`` when the answer does not
    say yes or a window confirms it. A question asking whether something lasts (``LASTING``)
    needs a window that says it does (``ONGOING``) instead of the words ``still`` ..."""
    terms = asked_terms(question, tokenize, site_terms)
    said = affirming(answer, terms, tokenize)
    if said is None:
        return None
    lasting = [m.group(0) for m in LASTING.finditer(question)]
    lasting_terms = {base(term) for word in lasting for term in tokenize(word)}
    needed = [t for t in terms if t not in lasting_terms]
    named = named_terms(question, tokenize)
    found, denied = windows(evidence, facts, tokenize)
    if any(holds_all(needed, d) for d in denied):
        return said
    ongoing = [ONGOING_TERM] if lasting else []
    return None if any(confirms(w, needed, named) and holds_all(ongoing, w)
                       for w in found) else said


def echoing(answer: str, names: Sequence[str], tokenize: Tokenize) -> str | None:
    """The answer's first sentence that holds every one of ``names`` with no negated clause
    holding any of them: "Teo left Fennec Systems in 2025 because he was not happy" restates
    its names, "Teo did not leave Fennec Systems in 2025" does not."""
    for sentence in sentences(answer):
        if not holds_all(names, _base_terms(sentence.text, tokenize)):
            continue
        clauses = [_base_terms(clause, tokenize) for clause in CLAUSE.split(sentence.text)
                   if is_negated(clause)]
        if not any(holds(name, clause) for clause in clauses for name in names):
            return sentence.text
    return None


def premise_names(question: str, tokenize: Tokenize, site_terms: Iterable[str] = ()) -> list[str]:
    """The named terms of a question that is not yes/no, less the site's own name's, when
    there are at least ``PAIRED`` of them; empty otherwise."""
    if POLAR.search(question):
        return []
    names = _without_site(sorted(named_terms(question, tokenize)), site_terms)
    return names if len(names) >= PAIRED else []


def unconfirmed_premise(answer: str, question: str, evidence: Sequence[Passage], facts: str,
                        tokenize: Tokenize, site_terms: Iterable[str] = ()) -> str | None:
    """For a question that is not yes/no, with at least ``PAIRED`` named terms besides the
    site's own name's: the answer's sentence that restates them all while no window holds
    them all (windows spanning the lines of an evidence passage), or, for a question
    presuming something ended, while a sentence holding the names it presumes ended
    (`ended_names`) says it lasts and not that anything ended ("Why did Teo leave Fennec
    Systems in 2025?" against "Principal Engineer at Fennec Systems since April 2023");
    ``None`` otherwise."""
    names = premise_names(question, tokenize, site_terms)
    said = echoing(answer, names, tokenize) if names else None
    if said is None:
        return None
    found, _ = windows(evidence, facts, tokenize, across_lines=True)
    if not any(holds_all(names, w) for w in found):
        return said
    things = ended_names(question, names, tokenize)
    if not things:
        return None
    lasting, _ = windows(evidence, facts, tokenize, near=0, labels=False)
    return said if any(ONGOING_TERM in w and ENDED_TERM not in w and holds_all(things, w)
                       for w in lasting) else None


def ended_names(question: str, names: Sequence[str], tokenize: Tokenize) -> list[str]:
    """The names without digits that a question presumes ended: those in the words after its
    first ``ENDED`` match up to the end of that clause ("leave *Fennec Systems* in 2025",
    "leaving *Northwind Maps* and starting at Fennec Systems"); empty without a match."""
    ended = ENDED.search(question)
    if ended is None:
        return []
    span = _base_terms(CLAUSE.split(question[ended.end():], maxsplit=1)[0], tokenize)
    return [t for t in names if t in span and not any(c.isdigit() for c in t)]


Check = Callable[[str, str, Sequence["Passage"], str, Tokenize, Iterable[str]], "str | None"]
"""A check: (answer, question, evidence, facts, tokenize, site terms) -> the sentence at fault."""
CHECKS: tuple[tuple[str, Check], ...] = (
    ("affirmation", unconfirmed_yes), ("premise", unconfirmed_premise))
"""Each check with the kind of claim it reports, in the order grounding runs them."""
