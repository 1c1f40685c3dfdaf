"""Follow-up questions made standalone before retrieval and the answer.

"What did he build there?" finds nothing on its own, and the earlier question added to it
often names the wrong place: the antecedent is usually in the previous *answer* ("At
Kestrel Analytics"). A schema-constrained call on slot 0 rewrites the question from the last
exchanges; the rewrite is kept only when it holds every word of the question and no word
that the conversation does not (`check`), so a model cannot slip a fact or an instruction
in. The hybrid search and the answer prompt then read it. A rewrite that joins the earlier
question to this one ("What did Teo win in 2021? What came with the prize?") only searches:
the model, which sees the history, answers the question as asked rather than two at once. A
failed or rejected rewrite leaves the question as asked, which is searched with the earlier
answers in view too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import prompt
from .config import Followups
from .control_text import neutralise
from .routing import call, conversation
from .upstream import UpstreamFailure, UpstreamUnavailable

if TYPE_CHECKING:
    from .policy import AskRequest
    from .state import Gateway

QUESTION_CHARS = 300
PREFIX = 4
"""Two words match when one is the other or they share their first ``PREFIX`` letters
("build" and "built"), so a rewrite may change a word's form, never bring a new one."""

RULES = """\
You rewrite a visitor's last question so that it can be understood without the \
conversation. Replace words that point back (he, she, it, they, there, that, then, this) \
with what they refer to in the conversation, and add what a short question leaves out. \
Keep every word of the question that is not such a pointer. Never answer the question and \
never add anything the conversation does not say. If the question already stands alone, \
repeat it unchanged.
Reply with JSON only: {"question": "..."}

Examples:
Earlier in this conversation:
Visitor: Who maintains the Acme scheduler?
Assistant: The platform team in Oslo.
Question: When did they start it?
-> {"question": "When did the platform team start the Acme scheduler?"}

Earlier in this conversation:
Visitor: What is Acme Queue?
Assistant: A job queue for Python services.
Question: How do I install Acme Queue on Windows?
-> {"question": "How do I install Acme Queue on Windows?"}"""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 1, "maxLength": QUESTION_CHARS}},
    "required": ["question"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Rewrite:
    """The question retrieval and the answer read, and how it came about: ``rewritten``,
    ``joined`` (``search`` holds the rewrite; the answer reads the question as asked),
    ``unchanged``, ``rejected_<reason>`` or ``failed`` (``/metrics`` counts these)."""

    question: str
    outcome: str
    search: str | None = None
    """What retrieval reads, when not ``question``."""

    @property
    def searched(self) -> str:
        """The text the hybrid search reads."""
        return self.search or self.question


def messages(ask: AskRequest, turns: int) -> list[dict[str, str]]:
    """The rules (the same on every call, so slot 0 caches them), then the last ``turns``
    exchanges and the question."""
    user = f"Earlier in this conversation:\n{conversation(ask, turns)}\nQuestion: {ask.question}"
    return [{"role": "system", "content": RULES}, {"role": "user", "content": user}]


def payload(rewrite_messages: list[dict[str, str]], settings: Followups) -> dict[str, Any]:
    """llama-server's body for the rewrite: the answer body's settings on the rewrite slot,
    without the repetition penalty (a rewrite copies words on purpose), schema-constrained."""
    return {
        **prompt.answer_payload(rewrite_messages, slot=settings.slot,
                                max_tokens=settings.max_tokens),
        "repeat_penalty": 1.0,
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "question", "strict": True,
                                            "schema": SCHEMA}},
    }


def _known(term: str, words: set[str]) -> bool:
    return term in words or (len(term) >= PREFIX and any(
        len(w) >= PREFIX and w[:PREFIX] == term[:PREFIX] for w in words))


def check(text: str, ask: AskRequest, turns: int, terms: Callable[[str], list[str]]
          ) -> tuple[str, str | None]:
    """Validate a rewrite reply: the standalone question, or the reason it is rejected.

    Args:
        text: the model's reply.
        ask: the visitor's request.
        turns: how many exchanges the rewrite saw.
        terms: the artifact's tokenizer (``KnowledgeIndex.terms``).

    Returns:
        ``(question, None)``, or ``("", reason)`` with ``malformed``, ``dropped`` (a word of
        the question is missing) or ``invented`` (a word neither the question nor the
        conversation holds).
    """
    try:
        data = json.loads(text)
    except ValueError:
        return "", "malformed"
    if not isinstance(data, dict) or not isinstance(data.get("question"), str):
        return "", "malformed"
    question = " ".join(data["question"].split())
    if not question:
        return "", "malformed"
    asked = set(terms(ask.question))
    said = asked | set(terms(conversation(ask, turns)))
    written = set(terms(question))
    if any(not _known(t, written) for t in asked):
        return "", "dropped"
    if any(not _known(t, said) for t in written):
        return "", "invented"
    return question, None


async def rewrite(gateway: Gateway, settings: Followups, ask: AskRequest) -> Rewrite:
    """The standalone form of a follow-up, counted in the metrics; the question as asked
    when there is no history, the call fails, or the reply does not pass `check`. Never
    raises for the model."""
    if not ask.history:
        return Rewrite(ask.question, "unchanged")
    started = time.monotonic()
    result = await _rewrite(gateway, settings, ask)
    gateway.metrics.followup(result.outcome, round((time.monotonic() - started) * 1000, 1))
    return result


async def _rewrite(gateway: Gateway, settings: Followups, ask: AskRequest) -> Rewrite:
    try:
        text, finish, _ = await call(gateway, payload(messages(ask, settings.turns), settings))
    except (UpstreamFailure, UpstreamUnavailable):
        return Rewrite(ask.question, "failed")
    if finish.reason != "stop":
        return Rewrite(ask.question, "rejected_truncated")
    question, reason = check(text, ask, settings.turns, gateway.index.terms)
    if reason:
        return Rewrite(ask.question, f"rejected_{reason}")
    if question == ask.question:
        return Rewrite(ask.question, "unchanged")
    if question.count("?") > ask.question.count("?"):
        return Rewrite(ask.question, "joined", search=neutralise(question))
    return Rewrite(neutralise(question), "rewritten")


__all__ = ["RULES", "SCHEMA", "Rewrite", "check", "messages", "payload", "rewrite"]
