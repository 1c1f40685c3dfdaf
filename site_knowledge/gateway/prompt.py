"""Prompt assembly: the artifact's stable system prompt, frozen earlier exchanges, then the
numbered evidence and the question.

The system message is byte-identical on every request and an exchange is frozen (question
without its evidence, answer without its citation markers), so llama-server's prompt cache
keeps the prefix and it grows by one exchange per turn.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from site_knowledge.budgets import Budget
from site_knowledge.grounding import Passage, heading_label

from .control_text import neutralise
from .policy import Exchange

if TYPE_CHECKING:
    from site_knowledge.retrieval import Hit
    from site_knowledge.retrieval.index import PassageRecord, SourceRecord

CITATION = re.compile(r"\[(\d{1,3})\]")
CITATION_STRIP = re.compile(r"[ \t]?\[\d{1,3}\]")


@dataclass(frozen=True)
class Evidence:
    """One numbered passage as the model and the client see it."""

    n: int
    title: str
    heading: str
    url: str
    text: str
    fiction: bool = False
    """From a source labelled fiction: never support for a claim about the real subject."""
    passage_id: str = ""
    """The artifact's passage id ("" for evidence made from text alone): sources and
    citations carry it, so a report names the very passage a model read."""

    def label(self) -> str:
        return heading_label(self.title, self.heading)

    def render(self) -> str:
        return f"[{self.n}] {self.label()} ({self.url})\n{self.text}"

    def passage(self) -> Passage:
        """The passage as grounding reads it."""
        return Passage(self.label(), self.text, self.fiction, self.url)

    def public(self) -> dict[str, Any]:
        named = {"n": self.n, "url": self.url, "title": self.label()}
        return {**named, "id": self.passage_id} if self.passage_id else named


class Budgets(Budget):
    """The gateway's budget as the artifact states it (:mod:`site_knowledge.budgets`)."""

    @classmethod
    def from_artifact(cls, artifact: dict[str, Any]) -> Budgets:
        raw = artifact.get("prompt", {}).get("budgets", {}).get("gateway", {})
        known = {k: int(v) for k, v in raw.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def page_evidence(n: int, title: str, heading: str, url: str, text: str,
                  fiction: bool = False) -> Evidence:
    """Evidence ``n`` from a page's words, any chat-template control text in its title,
    heading or text made inert (``control_text.neutralise``): a page is data, and must not
    be able to close the turn it is quoted in. ``browser/prompt.js``'s ``fitEvidence`` does
    the same (``tests/data/prompt_vectors.json``)."""
    return Evidence(n, neutralise(title), neutralise(heading), url, neutralise(text), fiction)


def evidence_of(n: int, source: SourceRecord, passage: PassageRecord) -> Evidence:
    """Passage ``n`` of the evidence, from its artifact records."""
    return replace(page_evidence(n, source.title, passage.heading or "", passage.url,
                                 passage.text, source.authority == "fiction"),
                   passage_id=passage.id)


def evidence_from_hits(hits: Sequence[Hit]) -> list[Evidence]:
    return [evidence_of(i, h.source, h.passage) for i, h in enumerate(hits, start=1)]


def strip_citations(answer: str) -> str:
    return CITATION_STRIP.sub("", answer).strip()


def citations(answer: str, evidence: Sequence[Evidence]) -> list[dict[str, Any]]:
    """The passages an answer cites, in order of first mention; unknown numbers dropped."""
    by_n = {e.n: e for e in evidence}
    seen: list[int] = []
    for match in CITATION.finditer(answer):
        n = int(match.group(1))
        if n in by_n and n not in seen:
            seen.append(n)
    return [by_n[n].public() for n in seen]


ASKING = re.compile(
    r"\b(?:what|whats|who|whom|whose|when|where|why|how|which|is|are|was|were|am|do|does|did|"
    r"can|could|should|would|will|has|have|had|tell|explain|describe|list|show|give|name|"
    r"summari[sz]e|compare|define|find)\b", re.IGNORECASE)
"""A word that makes a visitor's text a question or a request rather than a search term."""
TERMS_MAX_WORDS = 4
TERMS_QUESTION = "What does the site say about {}?"
"""How a search term alone (``airflow``, ``slotmeter pls``) is put to the model: asked bare,
small models answer that the site does not cover it."""


def as_asked(question: str, history: Sequence[Exchange] = ()) -> str:
    """The question as the model reads it: a first question of at most ``TERMS_MAX_WORDS``
    words that asks nothing (no question word or request) becomes ``TERMS_QUESTION``."""
    words = re.findall(r"[^\W_]+", question)
    if history or not words or len(words) > TERMS_MAX_WORDS or ASKING.search(question):
        return question
    return TERMS_QUESTION.format(question.strip().rstrip("?!. ").strip())


def messages(
    system: str, history: Sequence[Exchange], evidence: Sequence[Evidence], question: str,
    notice: str = "",
) -> list[dict[str, str]]:
    """System prompt, frozen history, then the excerpts, the premise notice (if any) and the
    question (``as_asked``)."""
    out = [{"role": "system", "content": system}]
    for exchange in history:
        out.append({"role": "user", "content": exchange.question})
        out.append({"role": "assistant", "content": strip_citations(exchange.answer)})
    blocks = "\n\n".join(e.render() for e in evidence) or "(no excerpts)"
    note = f"{notice}\n\n" if notice else ""
    out.append({
        "role": "user",
        "content": f"Excerpts from the site:\n\n{blocks}\n\n{note}Question: "
                   f"{as_asked(question, history)}",
    })
    return out


STOP = ("\nQuestion:", "\nExcerpts from the site:")
"""An answer that starts a new turn of the prompt's layout has ended."""
REPEAT_PENALTY, REPEAT_LAST_N = 1.1, 128
"""A mild penalty on recent tokens: small models otherwise loop until the token budget."""


def sampling() -> dict[str, Any]:
    """The answer's sampling settings in llama-server's names: what the gateway sends, and
    what the box sends its local engines (``prompt.js`` ``SAMPLING``, held to this by the
    shared prompt vectors)."""
    return {"temperature": 0, "repeat_penalty": REPEAT_PENALTY,
            "repeat_last_n": REPEAT_LAST_N, "stop": list(STOP)}


def answer_payload(messages: list[dict[str, str]], *, slot: int, max_tokens: int) -> dict[str, Any]:
    """llama-server's ``/v1/chat/completions`` body for an answer: greedy with a mild
    repetition penalty, stopped at a new turn of the prompt's layout, prompt-cached in the
    given slot, thinking off. The gateway, the evals' direct engine and the benchmarks all
    send this body (each adds ``stream`` as it reads the reply).

    Args:
        messages: the assembled prompt (``messages`` / ``assemble``).
        slot: llama-server's ``id_slot`` for answers.
        max_tokens: the answer's token budget.

    Returns:
        The request body.
    """
    return {
        "id_slot": slot,
        "messages": messages,
        "cache_prompt": True,
        "max_tokens": max_tokens,
        **sampling(),
        "chat_template_kwargs": {"enable_thinking": False},
    }


def by_characters(
    history: Sequence[Exchange], evidence: Sequence[Evidence], budgets: Budgets
) -> tuple[list[Exchange], list[Evidence]]:
    """The character fallback: newest exchanges and best passages that fit their budgets."""
    kept_history: list[Exchange] = []
    used = 0
    for exchange in reversed(history[-budgets.max_exchanges:]):
        size = len(exchange.question) + len(strip_citations(exchange.answer))
        if used + size > budgets.history_chars:
            break
        kept_history.insert(0, exchange)
        used += size
    kept_evidence: list[Evidence] = []
    used = 0
    for item in evidence:
        if kept_evidence and used + len(item.text) > budgets.evidence_chars:
            break
        kept_evidence.append(item)
        used += len(item.text)
    return kept_history, kept_evidence


class TokenCounter:
    """Exact prompt sizes from the upstream's tokenizer, skipped when a bound shows the
    prompt fits by a wide margin.

    The bound takes the largest tokens-per-character ratio seen in earlier exact counts,
    times ``margin``, for ASCII text, and one token per UTF-8 byte (the worst case) for
    every other character.
    """

    def __init__(self, count: Callable[[list[dict[str, str]]], Awaitable[int | None]],
                 limit: int, margin: float = 1.5) -> None:
        self.count = count
        self.limit = limit
        self.margin = margin
        self.ratio: float | None = None
        self.skipped = 0

    async def __call__(self, messages: list[dict[str, str]]) -> int | None:
        text = "".join(m["content"] for m in messages)
        other = [c for c in text if not c.isascii()]
        ascii_chars = len(text) - len(other)
        worst_other = sum(len(c.encode("utf-8")) for c in other)
        overhead = 8 * len(messages)
        if self.ratio is not None:
            bound = ascii_chars * self.ratio * self.margin + worst_other + overhead
            if bound <= self.limit:
                self.skipped += 1
                return round(ascii_chars * self.ratio) + worst_other + overhead
        exact = await self.count(messages)
        if exact is not None and text:
            self.ratio = max(self.ratio or 0.0, exact / len(text))
        return exact


class PromptTooLarge(Exception):
    """Even one passage without history does not fit the slot."""


async def assemble(
    system: str,
    history: Sequence[Exchange],
    evidence: Sequence[Evidence],
    question: str,
    budgets: Budgets,
    count_tokens: Callable[[list[dict[str, str]]], Awaitable[int | None]],
    notice: str = "",
) -> tuple[list[dict[str, str]], list[Evidence], int | None]:
    """Fit the prompt into ``context_tokens - answer_tokens``; ``notice`` is the premise
    notice (``site_knowledge.grounding``), placed right before the question.

    Counts with the upstream's tokenizer; drops the oldest exchange, then the weakest
    passage, until it fits. Without a tokenizer, the character budgets decide.

    Returns:
        The messages, the evidence kept, and the counted prompt tokens (``None`` if uncounted).
    """
    kept_history = list(history[-budgets.max_exchanges:])
    kept_evidence = list(evidence)
    limit = budgets.context_tokens - budgets.answer_tokens
    while True:
        built = messages(system, kept_history, kept_evidence, question, notice)
        count = await count_tokens(built)
        if count is None:
            kept_history, kept_evidence = by_characters(history, evidence, budgets)
            built = messages(system, kept_history, kept_evidence, question, notice)
            return built, kept_evidence, None
        if count <= limit:
            return built, kept_evidence, count
        if kept_history:
            kept_history.pop(0)
        elif len(kept_evidence) > 1:
            kept_evidence.pop()
        else:
            raise PromptTooLarge
