"""The claim check: numbers and names in an answer that the evidence and the stable facts
never state (SPEC.md, "Claims")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import combinations, pairwise

from site_knowledge.retrieval.words import IGNORED_NAMES, WORD, fold, is_name

from .injection import planted
from .rules import RULES, count, pattern, share, words
from .text import (
    NUMBER_WORDS,
    ZERO_WIDTH,
    identifiers,
    is_negated,
    numbers,
    occurs,
    plain,
    without_identifiers,
)

_YEAR = range(RULES["thresholds"]["YEARS"][0], RULES["thresholds"]["YEARS"][1] + 1)
_SENTENCE_OPENERS = pattern("SENTENCE_OPENERS")
_AFTER_COLON = pattern("AFTER_COLON")
"""A capitalised word after a colon ("The answer is: Vargasburg") is checked as a name."""
_SHORT = count("SHORT")
"""A sentence of at most this many words (a list item, a one-word answer) has its opening
word checked as a name too."""
_TRIVIAL_NUMBERS = frozenset(float(n) for n in RULES["thresholds"]["TRIVIAL_NUMBERS"])
_DURATION = frozenset(words("DURATION"))
UNITS = _DURATION | frozenset(words("UNITS"))
"""Units (tokenizer terms): a number's support must share a term other than its unit with the
claiming sentence ("the upgrade's downtime was nine hours" is not supported by "the tile build
took nine hours")."""
AGE = pattern("AGE")
"""An age ("43 years old", "aged 43"): of a person, only an age the support states can be
one, never a duration, a sum or another number that happens to be the same."""
PRIVATE = pattern("PRIVATE")
"""Words of private matters (family, pay, birth): a number said of a person beside one of them
must be stated in a support sentence holding that word too, never computed ("Teo has 3
children" is not supported by "under 3 hours")."""
PERSONAL = pattern("PERSONAL")
"""A sentence with one of these, or with a term of the site's name, speaks of a person."""
ARITHMETIC_SHARED = count("ARITHMETIC_SHARED")
"""A sum or difference needs more common ground than a stated number: two shared terms."""
ECHO_SHARE, ECHO_MIN_TERMS = share("ECHO_SHARE"), count("ECHO_MIN_TERMS")
"""A sentence or clause of at least ``ECHO_MIN_TERMS`` terms echoes planted text when a planted
sentence holds this share of its terms and more of them than any clean support sentence."""
CLAUSE = pattern("CLAUSE")
"""Where a sentence divides into clauses ("Teo works at Fennec, and he is looking for a job")."""
REPORTED = pattern("REPORTED")
"""Reported speech: a sentence that says who said the planted words describes them, unless the
planted sentence itself says it ("Teo has told us that ...")."""
CUT_NAME = count("CUT_NAME")
"""Least letters of a capitalised word that ``Support.completed`` reads as a name cut short."""
SPAN = pattern("SPAN")
"""A span of time between two years, each perhaps after its month ("from September 2014 to
December 2016", "2012–2014"): one support sentence must state both ends."""
MONTHS = words("MONTHS")


def _month(word: str | None) -> str | None:
    """A month's three-letter key, or None for no word or a word that names no month."""
    key = fold(word)[:3] if word else ""
    return key if key in MONTHS else None


@dataclass(frozen=True)
class Claim:
    """One checkable item of a sentence: a ``number`` or a ``name``, as written, a whole
    sentence that echoes planted text (``planted``), a yes (``affirmation``) or a
    restated premise (``premise``) that the evidence does not hold together (affirmation.py),
    or a sentence of an answer that cites nothing (``unattributed``, answer.py)."""

    kind: str
    text: str


class Support:
    """What an answer may state: the words of the evidence and the stable facts (less planted
    sentences: an injection attempt and the rest of its paragraph; fiction apart, only good
    for denials), each number with the terms of the sentences that state it, the ages stated
    (``AGE``), the durations between two years one sentence states, or a stated year and the
    build year (differences, counted either way), the years and months each sentence states
    (for spans), the clean sentences themselves (for identifiers), and
    the term sets of the clean and the planted sentences (an answer may not repeat a planted
    one)."""

    def __init__(self, texts: Iterable[str], tokenize: Callable[[str], list[str]],
                 reference_year: int | None = None, fiction: Iterable[str] = ()) -> None:
        self.tokenize = tokenize
        self.words: set[str] = set()
        self.contexts: dict[float, list[frozenset[str]]] = {}
        self.arithmetic: dict[float, list[frozenset[str]]] = {}
        self.clean: list[frozenset[str]] = []
        self.ages: set[float] = set()
        self.planted: list[frozenset[str]] = []
        self.planted_words: list[frozenset[str]] = []
        self.names_before: dict[str, set[str]] = {}
        self.texts: list[str] = []
        self.dates: list[tuple[frozenset[int], frozenset[str]]] = []
        for sentence, is_planted, beside in _with_neighbours(texts, tokenize):
            terms = frozenset(_content_terms(tokenize(sentence)))
            if is_planted:
                self.planted.append(terms)
                self.planted_words.append(frozenset(fold(w) for w in WORD.findall(sentence)))
                continue
            self.clean.append(terms)
            self.texts.append(ZERO_WIDTH.sub("", sentence))
            self.ages |= stated_ages(sentence)
            self.words.update(fold(w) for w in WORD.findall(sentence))
            for word, following, _ in _adjacent_words(sentence):
                if word[0].isupper():
                    self.names_before.setdefault(fold(following), set()).add(word)
            values = [value for _, value in numbers(sentence)]
            for value in values:
                self.contexts.setdefault(value, []).append(terms | beside)
            stated_years = frozenset(int(v) for v in values if _is_year(v))
            self.dates.append((stated_years, frozenset(
                m for w in WORD.findall(sentence) if (m := _month(w)) is not None)))
            operands = sorted({v for v in values if not _is_year(v)})
            for a, b in combinations(operands, 2):
                for result in (a + b, b - a):
                    self.arithmetic.setdefault(result, []).append(terms)
        self.fiction_words = {fold(w) for s, is_planted in _sentences(fiction) if not is_planted
                              for w in WORD.findall(s)}
        pairs = {pair for stated, _ in self.dates for pair in combinations(sorted(stated), 2)}
        if reference_year is not None:
            pairs |= {(year, reference_year) for stated, _ in self.dates for year in stated}
        self.durations = {float(abs(a - b) + d) for a, b in pairs for d in (-1, 0, 1)}

    def has_number(self, value: float, claim_terms: frozenset[str], computed: bool = True
                   ) -> bool:
        """The number is stated in a sentence (read with the sentences right before and after it
        in its text) sharing a term other than a unit (``UNITS``)
        with the claiming sentence, or is the sum or difference of two numbers (not years)
        that a sentence sharing ``ARITHMETIC_SHARED`` such terms with it states ("the nightly
        build went from about 9 hours to under 3" supports "partitioning saved the nightly
        build about 6 hours"), or it is a duration between stated years and the sentence
        speaks of durations; without ``computed``, only the first."""
        if value in _TRIVIAL_NUMBERS:
            return True
        sentence_terms = claim_terms - UNITS
        if any(terms & sentence_terms for terms in self.contexts.get(value, ())):
            return True
        if not computed:
            return False
        if any(len(terms & sentence_terms) >= ARITHMETIC_SHARED
               for terms in self.arithmetic.get(value, ())):
            return True
        return value in self.durations and not _DURATION.isdisjoint(claim_terms)

    def has_word(self, word: str) -> bool:
        return fold(word) in self.words

    def has_identifier(self, identifier: str) -> bool:
        """The identifier stands verbatim in a clean support sentence (``occurs``), zero-width
        characters of both ignored."""
        identifier = ZERO_WIDTH.sub("", identifier)
        return any(occurs(identifier, text) for text in self.texts)

    def states_span(self, span: re.Match[str]) -> bool:
        """One clean support sentence states both years of a ``SPAN`` match, and its months
        where the span names them and that sentence names any."""
        start, end = int(span.group(2)), int(span.group(4))
        months = {m for m in (_month(span.group(1)), _month(span.group(3))) if m}
        return any({start, end} <= stated and (not named or months <= named)
                   for stated, named in self.dates)

    def completed(self, sentence: str) -> str:
        """The sentence with each capitalised word of ``CUT_NAME`` letters or more that the
        support never uses written whole, where it begins exactly one longer capitalised word
        that a support sentence writes before the same next word: "Teod Varga" becomes
        "Teodor Varga" (the repetition penalty cuts a name the prompt repeats)."""
        out: list[str] = []
        last = 0
        for word, following, start in _adjacent_words(sentence):
            if len(word) < CUT_NAME or not word[0].isupper() or self.has_word(word):
                continue
            cut = fold(word)
            whole = {w for w in self.names_before.get(fold(following), ())
                     if len(w) > len(word) and fold(w).startswith(cut)}
            if len(whole) == 1:
                out.append(sentence[last:start] + whole.pop())
                last = start + len(word)
        return "".join(out) + sentence[last:]

    def echoes_planted(self, sentence: str, terms: frozenset[str], end: int | None = None
                       ) -> bool:
        """The terms (of the sentence or one of its clauses) are mostly a planted sentence's,
        more than any clean one's, and the sentence does not report them as someone else's
        words: with a reporting word the planted sentence lacks (``told chatbots to say``),
        or after a reporter it does not name ("The recruiter's message told ...", where the
        planted text says "Teo has told us"). Only reporting words before ``end`` (where the
        echoing clause ends) count: "..., but she didn't say when" reports nothing before."""
        if len(terms) < ECHO_MIN_TERMS or not self.planted:
            return False
        shares = [len(terms & p) for p in self.planted]
        best = shares.index(max(shares))
        clean = max((len(terms & c) for c in self.clean), default=0)
        if shares[best] < ECHO_SHARE * len(terms) or shares[best] <= clean:
            return False
        for match in REPORTED.finditer(sentence, 0, len(sentence) if end is None else end):
            if fold(match.group(0)) not in self.planted_words[best]:
                return False
            reporter = {t for t in _content_terms(self.tokenize(plain(sentence[:match.start()])))
                        if t not in IGNORED_NAMES}
            if reporter - self.planted[best]:
                return False
        return True


def stated_ages(text: str) -> set[float]:
    """The numbers ``AGE`` reads as ages in a text."""
    return {value for match in AGE.finditer(text) for group in match.groups() if group
            for _, value in numbers(group)}


def _is_year(value: float) -> bool:
    return value.is_integer() and int(value) in _YEAR


def _sentences(texts: Iterable[str]) -> Iterable[tuple[str, bool]]:
    """The sentences of the texts, each with whether it was planted (an instruction planted
    in a page, and what it asks to be said, is never support)."""
    for text in texts:
        for sentence, is_planted in planted(text):
            yield sentence.text, is_planted


def _with_neighbours(texts: Iterable[str], tokenize: Callable[[str], list[str]]
                     ) -> Iterable[tuple[str, bool, frozenset[str]]]:
    """``_sentences`` with the content terms of the clean sentences right before and after
    each one in its text: a number's context ("Default: 120" between a setting's name and
    "The default value for the voltage field ...", as documentation writes settings)."""
    for text in texts:
        found = [(s.text, is_planted) for s, is_planted in planted(text)]
        terms = [frozenset() if is_planted else frozenset(_content_terms(tokenize(sentence)))
                 for sentence, is_planted in found]
        for i, (sentence, is_planted) in enumerate(found):
            before = terms[i - 1] if i else frozenset()
            after = terms[i + 1] if i + 1 < len(terms) else frozenset()
            yield sentence, is_planted, before | after


def _adjacent_words(text: str) -> Iterable[tuple[str, str, int]]:
    """Each word of the text (``WORD``) with the word after it, where only white space lies
    between them, and where the first starts."""
    for match, following in pairwise(WORD.finditer(text)):
        if text[match.end():following.start()].isspace():
            yield match.group(0), following.group(0), match.start()


def _content_terms(terms: Iterable[str]) -> list[str]:
    """The terms that are not numbers (a number never supports itself)."""
    return [t for t in terms if not t.isdigit() and t not in NUMBER_WORDS]


def _terms(text: str, support: Support) -> frozenset[str]:
    """The tokenizer terms of a sentence or clause's plain text, without pure digits."""
    return frozenset(_content_terms(support.tokenize(plain(text))))


_LIST_MARKER = pattern("LIST_MARKER")


def claims(sentence: str, tokenize: Callable[[str], list[str]]) -> list[Claim]:
    """The numbers and name-like words of one sentence, in order (a leading list number is
    not a claim). An opening word counts as a name after a colon, in a sentence of at most
    ``_SHORT`` words or before another capitalised word, unless it is a stopword (``tokenize``
    drops it)."""
    text = plain(_LIST_MARKER.sub("", sentence, count=1))
    found = [Claim("number", written) for written, value in numbers(text)
             if value not in _TRIVIAL_NUMBERS]
    parts = [(match.start(), part) for match in WORD.finditer(text)
             for part in match.group(0).split("-") if part and not part[0].isdigit()]
    short = len(parts) <= _SHORT
    for index, (start, part) in enumerate(parts):
        opener = _SENTENCE_OPENERS.search(text[:start]) is not None
        followed = index + 1 < len(parts) and parts[index + 1][1][0].isupper()
        colon = _AFTER_COLON.search(text[:start]) is not None
        if is_name(part, opener) or (opener and (short or followed or colon) and part[0].isupper()
                                     and fold(part) not in IGNORED_NAMES and tokenize(part)):
            found.append(Claim("name", part))
    return found


def unsupported(sentence: str, support: Support, question_words: frozenset[str],
                question_terms: frozenset[str] = frozenset(),
                people: frozenset[str] = frozenset(),
                premises: frozenset[str] = frozenset()) -> list[Claim]:
    """The sentence's claims that the support never states. A number's context is the
    sentence's terms and the question's (``question_terms``: a short answer like "2019"
    answers the question it was asked).

    A code identifier (``identifiers``: inline code, dotted and snake_case names, versions,
    flags) is supported only where it stands verbatim in a support sentence; one that does is
    never read as names or numbers ("`rest_framework.authentication`" is not three names). A
    span between two years ("from September 2014 to December 2016") needs one support
    sentence stating both ends (``Support.states_span``), not two dates stated apart.

    The age of a person (``AGE`` in a sentence that says ``he``, ``I``, ... or a term of the
    site's name, ``people``) must be stated as an age (``AGE`` in a support sentence): no
    duration, sum or other mention of the number supports it. In such a sentence with a
    ``PRIVATE`` word, every number must be stated beside one of those words.

    A sentence, or one of its clauses, that is not negated and echoes planted text without
    reporting it as someone else's words makes the whole sentence one claim, ``planted``: it
    repeats what an injection in a page asked to be said ("He told me he is actively looking
    for a new job, but he didn't say where" is not saved by its last clause's "didn't").

    A sentence that denies something may name what the question named (``Teo never
    worked at Google``) or what only fiction says (``he does not fly planes out of
    Reykjavík; that is fiction``): those words are not claims. A name the site never uses
    (``premises``, folded) is spared only where every clause naming it denies: "Teo worked
    for Zalando from 2017, but the site gives no details about Zalando" plays along.
    """
    negated = is_negated(sentence)
    own = _terms(sentence, support)
    parts = [(sentence, own), *((c, _terms(c, support)) for c in CLAUSE.split(sentence))]
    if any(not is_negated(part) and support.echoes_planted(
            sentence, terms, sentence.find(part) + len(part)) for part, terms in parts):
        return [Claim("planted", sentence.strip())]
    found = identifiers(sentence)
    out = [Claim("identifier", i) for i in found if not support.has_identifier(i)]
    out += [Claim("span", m.group(0)) for m in SPAN.finditer(plain(sentence))
            if not support.states_span(m)]
    sentence = without_identifiers(sentence, found)
    terms = own | question_terms
    text = plain(sentence)
    personal = PERSONAL.search(text) is not None or not people.isdisjoint(own)
    ages = stated_ages(text) if personal else set()
    private = frozenset(_content_terms(support.tokenize(" ".join(PRIVATE.findall(text))))
                        ) if personal else frozenset()
    for claim in claims(sentence, support.tokenize):
        if claim.kind == "number":
            value = numbers(claim.text)[0][1]
            ok = (value in support.ages if value in ages
                  else support.has_number(value, private or terms, computed=not private))
        else:
            ok = support.has_word(claim.text)
        folded = fold(claim.text)
        if not ok and negated and (folded in question_words or folded in support.fiction_words):
            ok = folded not in premises or _denied_wherever_named(sentence, folded)
        if not ok:
            out.append(claim)
    return out


def _denied_wherever_named(sentence: str, folded: str) -> bool:
    """Every clause of the sentence that names the (folded) word is negated."""
    return all(is_negated(clause) for clause in CLAUSE.split(sentence)
               if folded in {fold(word) for word in WORD.findall(clause)})
