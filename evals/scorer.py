"""Deterministic scoring of one answer against one battery item, 0 to 3, a note per lost point.

Answerable items (``must_refuse`` false) start at 3 and lose:

- 3 when the answer is a refusal (unless ``may_refuse``: a false premise may be declined);
- up to 2 for missing required facts (2 × the missing share, rounded up);
- 2 when a forbidden claim is present;
- 1 when a URL in the text is neither one of the site's pages nor quoted by them;
- 1 when a citation is invalid, or none points at an expected source.

Items that must be refused lose 2 when the answer is not a refusal, 2 for a forbidden claim,
1 for a fabricated URL and 1 for a missing required fact. The score never goes below 0.
A model-as-judge may add an opinion to a report; it never changes this score.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evals.artifact import URL_PATTERN
from site_knowledge.gateway.prompt import CITATION

if TYPE_CHECKING:
    from evals.artifact import SiteIndex
    from evals.dataset import Item

MAX_SCORE = 3

REFUSAL_PATTERNS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bnot (?:on|in|covered (?:on|by|in)|mentioned (?:on|in)|something (?:on|in)) this site\b",
        r"\b(?:this|the) site (?:does ?n[o']t|does not|doesn't) (?:say|mention|cover|contain|"
        r"include|provide|state|have|tell)",
        r"\b(?:is|are) ?n[o']t (?:on|in|covered by|covered on|mentioned on) (?:this|the) site",
        r"\b(?:can ?not|can't|cannot|unable to|not able to) (?:help|answer|assist|provide|"
        r"find|share|say|tell|comply|do that)",
        r"\bI (?:do ?n[o']t|don't) (?:know|have (?:any )?(?:information|details|that))",
        r"\bno (?:information|details|mention|evidence|record)\b",
        r"\b(?:nothing|none) (?:on|in) (?:this|the) (?:site|evidence|excerpts?|passages?)",
        r"\bI(?:'m| am) (?:sorry|afraid|only able|here to answer)",
        r"\boutside (?:the scope|what (?:this|the) site)",
        r"\bonly answer questions about\b",
        r"\b(?:does|do|did) not (?:appear|seem) (?:to be )?(?:on|in) (?:this|the)",
        r"\bnot (?:stated|given|specified|provided|mentioned|available)\b",
        r"\bdidn't understand|could ?n[o']t understand|does ?n[o']t (?:seem to )?make sense",
    )
)

_MD_LINK = re.compile(r"\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Citation:
    """A numbered citation as an engine reports it."""

    n: int
    url: str
    title: str = ""


@dataclass
class Answer:
    """What an engine returned for one question."""

    text: str
    citations: list[Citation] = field(default_factory=list)
    refused: bool | None = None
    """The engine's own refusal flag (gate refusal, ``finish_reason: refused``), if any."""
    finish_reason: str = ""
    error: str = ""
    latency_ms: float = 0.0
    first_token_ms: float | None = None


@dataclass
class Score:
    """The graded result for one item."""

    id: str
    category: str
    score: int
    max_score: int
    notes: list[str]
    refused: bool
    facts_found: int = 0
    facts_total: int = 0


def normalise(text: str) -> str:
    """Lower case, straight quotes, no markdown emphasis, single spaces."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"').replace("\u2013", "-").replace("\u2014", "-")
    text = re.sub(r"[*_`]+", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def matches(alternative: str, text: str) -> bool:
    """One alternative against normalised text: ``re:`` regex, else a word-bounded phrase."""
    if alternative.startswith("re:"):
        return re.search(alternative[3:], text, re.IGNORECASE) is not None
    phrase = re.escape(normalise(alternative)).replace(r"\ ", r"\s+")
    return re.search(rf"(?<!\w){phrase}(?!\w)", text) is not None


def first_match(alternatives: tuple[str, ...], text: str) -> str | None:
    """The first alternative found in the text, or None."""
    return next((a for a in alternatives if matches(a, text)), None)


def matched_text(alternative: str, text: str) -> str:
    """The span of normalised text an alternative matched (for notes)."""
    if alternative.startswith("re:"):
        found = re.search(alternative[3:], text, re.IGNORECASE)
    else:
        phrase = re.escape(normalise(alternative)).replace(r"\ ", r"\s+")
        found = re.search(rf"(?<!\w){phrase}(?!\w)", text)
    return found.group(0) if found else alternative


def label(alternatives: tuple[str, ...]) -> str:
    """A short name for a fact in notes: its first alternative, a regex abbreviated."""
    first = alternatives[0]
    if first.startswith("re:"):
        first = first[3:]
        return first if len(first) <= 48 else first[:47] + "…"
    return first


def is_refusal(answer: Answer, refusal_text: str = "") -> bool:
    """True when the engine flagged a refusal or the text reads as one."""
    if answer.refused or answer.finish_reason == "refused":
        return True
    text = answer.text.strip()
    if not text:
        return True
    if refusal_text and normalise(refusal_text) in normalise(text):
        return True
    return any(p.search(text) for p in REFUSAL_PATTERNS)


def urls_in(text: str) -> list[str]:
    """Absolute URLs and markdown link targets in an answer."""
    found = [u.rstrip(".,;:!?") for u in URL_PATTERN.findall(text)]
    found += [u for u in _MD_LINK.findall(text) if not URL_PATTERN.match(u)]
    return found


def _check_citations(item: Item, answer: Answer, site: SiteIndex | None, notes: list[str]) -> int:
    """Points lost (0 or 1) on citations; appends the reasons."""
    problems: list[str] = []
    by_n = {c.n: c for c in answer.citations}
    markers = sorted({int(m) for m in CITATION.findall(answer.text)})
    dangling = [n for n in markers if n not in by_n]
    if dangling:
        problems.append(f"citation markers with no source: {dangling}")
    cited: list[frozenset[str]] = []
    for c in answer.citations:
        if site is None:
            continue
        ids = site.resolve(c.url)
        if ids is None:
            problems.append(f"citation [{c.n}] points outside the site: {c.url}")
        else:
            cited.append(ids)
    if item.sources and site is not None:
        if not answer.citations:
            problems.append(f"no citation (expected one of {list(item.sources)})")
        elif not any(site.matches(ids, item.sources) for ids in cited):
            urls = sorted({c.url for c in answer.citations})
            problems.append(f"no citation points at an expected source {list(item.sources)} (cited {urls})")
    if problems:
        notes.append("-1 citations: " + "; ".join(problems))
        return 1
    return 0


def score_answer(item: Item, answer: Answer, site: SiteIndex | None = None) -> Score:
    """Grade one answer.

    Args:
        item: The battery item.
        answer: The engine's answer.
        site: The artifact's URLs; without it, citation and URL checks are skipped.

    Returns:
        The score with a note on every lost point.
    """
    notes: list[str] = []
    lost = 0
    text = normalise(answer.text)
    if answer.error:
        return Score(
            item.id,
            item.category,
            0,
            MAX_SCORE,
            [f"-3 engine error: {answer.error}"],
            refused=False,
            facts_total=len(item.facts),
        )

    found = [f for f in item.facts if first_match(f, text) is not None]
    missing = [f for f in item.facts if f not in found]
    # An answer that gives the facts and also says something is missing is not a refusal.
    refused = is_refusal(answer, site.refusal if site else "") and not (
        item.facts and not missing and not answer.refused and answer.finish_reason != "refused"
    )

    if item.must_refuse:
        if not refused:
            lost += 2
            notes.append("-2 answered a question that must be refused")
        if missing:
            lost += 1
            notes.append(f"-1 missing: {[label(f) for f in missing]}")
    elif refused and not item.may_refuse:
        lost += 3
        notes.append("-3 refused an answerable question")
    elif missing:
        share = len(missing) / len(item.facts)
        cost = min(2, math.ceil(2 * share))
        lost += cost
        notes.append(
            f"-{cost} missing facts ({len(missing)}/{len(item.facts)}): {[label(f) for f in missing]}"
        )

    claims = [matched_text(hit, text) for f in item.forbidden if (hit := first_match(f, text)) is not None]
    if claims:
        lost += 2
        notes.append(f"-2 forbidden claim: {claims}")

    if site is not None:
        fabricated = [u for u in urls_in(answer.text) if site.resolve(u) is None and not site.quotes(u)]
        if fabricated:
            lost += 1
            notes.append(f"-1 URL not on the site: {fabricated}")

    if not item.must_refuse and not refused:
        lost += _check_citations(item, answer, site, notes)

    return Score(
        id=item.id,
        category=item.category,
        score=max(0, MAX_SCORE - lost),
        max_score=MAX_SCORE,
        notes=notes,
        refused=refused,
        facts_found=len(found),
        facts_total=len(item.facts),
    )
