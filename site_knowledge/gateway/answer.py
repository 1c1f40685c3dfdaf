"""One answer, step by step: wait for the model, assemble the prompt, stream from the
upstream, settle the terminal event, record the metrics.

``answer`` strings the steps together and owns the two promises of the stream contract:
every path out ends with exactly one terminal event (``done`` or ``error``), and the model's
place is released on every path. An exception nobody foresaw becomes an ``internal_error``
event, logged by type and place only (never its message, which may quote a prompt).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import traceback
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from site_knowledge.grounding import Grounded, Passage
from site_knowledge.retrieval.index import refers_back

from . import followup, prompt, routing
from .admission import QueueClosed, QueueTimeout, Ticket
from .metrics import Sample
from .pacing import DeadlinePassed, once, paced
from .policy import AskRequest
from .sse import HEARTBEAT, event
from .upstream import Delta, Finish, Started, UpstreamFailure, UpstreamUnavailable

if TYPE_CHECKING:
    from site_knowledge.retrieval import Hit

    from .state import Gateway

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Prompt:
    """What the model is asked: the messages, the evidence they number, their size."""

    messages: Messages
    evidence: list[prompt.Evidence]
    tokens: int | None


@dataclass
class Run:
    """What one answer accumulated on its way, for the terminal event and the metrics."""

    ticket: Ticket
    started: float
    deadline: float = math.inf
    outcome: str = "cancelled"
    text: str = ""
    first_token: float | None = None
    finish: Finish | None = None
    url_index: int = 0
    prompt: Prompt | None = None


@dataclass(frozen=True)
class Failure:
    """A terminal ``error`` event and the outcome it is counted under."""

    outcome: str
    code: str
    message: str
    rejection: str | None = None

    def payload(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


QUEUE_TIMEOUT = Failure("rejected", "queue_timeout", "Waited too long for the model; try again.",
                        rejection="queue_timeout")
SHUTTING_DOWN_WAITING = Failure("rejected", "shutting_down",
                                "The gateway is restarting; try again shortly.",
                                rejection="shutting_down")
SHUTTING_DOWN = Failure("failed", "shutting_down",
                        "The gateway restarted before the answer was finished.")
GENERATION_TIMEOUT = Failure("failed", "generation_timeout",
                             "The model took too long to answer; try again.")
INTERNAL = Failure("failed", "internal_error", "The gateway failed to answer; try again.")


async def wait_turn(ticket: Ticket, heartbeat_s: float, max_wait_s: float
                    ) -> AsyncIterator[bytes]:
    """``queued`` events and heartbeat comments until the ticket is active.

    Raises:
        QueueTimeout: the wait exceeded ``max_wait_s``.
    """
    if ticket.active:
        return
    async for position in ticket.wait(heartbeat_s, max_wait_s):
        yield HEARTBEAT if position is None else event({"queued": {"position": position}})


async def assemble_prompt(gateway: Gateway, ask: AskRequest, hits: Sequence[Hit]) -> Prompt:
    """The messages for this question: system prompt, frozen history, evidence, question,
    fitted to the slot's token budget."""
    evidence = prompt.evidence_from_hits(hits)
    notice = (gateway.grounding.premise_notice(ask.question)
              if "premises" in gateway.config.grounding else "")
    messages, kept, tokens = await prompt.assemble(
        gateway.system, ask.history, evidence, ask.question, gateway.budgets, gateway.counter,
        notice,
    )
    return Prompt(messages, kept, tokens)


def chat_payload(gateway: Gateway, messages: Messages) -> dict[str, Any]:
    """The upstream request for an answer on the answer slot."""
    return prompt.answer_payload(messages, slot=gateway.config.answer_slot,
                                 max_tokens=gateway.budgets.answer_tokens)


async def stream_answer(gateway: Gateway, messages: Messages, run: Run) -> AsyncIterator[bytes]:
    """``delta`` events as the upstream generates, a heartbeat comment for every quiet
    ``heartbeat_s`` (before the first token above all); the text and the finish land in
    ``run``.

    Raises:
        UpstreamUnavailable: no upstream accepted the request.
        UpstreamFailure: the upstream failed.
        DeadlinePassed: the answer's deadline (or the gateway's drain deadline) came first;
            the upstream request is closed, so the model stops.
    """
    gateway.metrics.upstream_requests += 1
    heartbeat_s = gateway.config.limits.heartbeat_s
    async with aclosing(gateway.upstream.chat(chat_payload(gateway, messages))) as stream:
        async for item in paced(stream, heartbeat_s, lambda: gateway.deadline(run.deadline)):
            if item is None:
                yield HEARTBEAT
            elif isinstance(item, Started):
                run.url_index = item.url_index
                gateway.metrics.upstream_failovers += item.failovers
            elif isinstance(item, Delta):
                if run.first_token is None:
                    run.first_token = time.monotonic()
                run.text += item.text
                yield event({"delta": item.text})
            else:
                run.finish = item


def assembled(run: Run) -> Prompt:
    """The run's prompt, once assembled."""
    if run.prompt is None:
        raise RuntimeError("the prompt was not assembled")
    return run.prompt


def finished(run: Run) -> Finish:
    """The run's finish; a stream that ended without one is an incomplete answer."""
    if run.finish is None:
        raise UpstreamFailure("upstream_incomplete", "The answer ended without finishing.")
    return run.finish


def settle(gateway: Gateway, question: str, run: Run) -> Grounded:
    """The answer as the visitor should read it: checked against its evidence and the stable
    facts, cited by attribution (each step unless turned off)."""
    steps = gateway.config.grounding
    evidence = run.prompt.evidence if run.prompt else []
    result = gateway.grounding.ground(run.text, question, [e.passage() for e in evidence],
                                      check_claims="claims" in steps,
                                      premises="premises" in steps)
    if "citations" not in steps:
        own = [c["n"] for c in prompt.citations(result.text, evidence)]
        result = replace(result, cited=own, fact_cited=[])
    return result


def cited_facts(grounded: Grounded, facts: Sequence[Passage], after: int
                ) -> list[dict[str, Any]]:
    """The fact passages a grounded answer cites (of ``facts``), as ``done`` lists them:
    numbered after the ``after`` evidence passages."""
    cited = [facts[n - 1] for n in grounded.fact_cited if 0 < n <= len(facts)]
    return [{"n": after + k, "url": p.url, "title": p.label} for k, p in enumerate(cited, start=1)]


def done_payload(grounded: Grounded, evidence: Sequence[prompt.Evidence], finish_reason: str,
                 model: str | None = None, route: dict[str, Any] | None = None,
                 standalone: str | None = None, facts: Sequence[Passage] = ()
                 ) -> dict[str, Any]:
    """The terminal ``done`` event: the cited evidence, then the cited fact passages (of
    ``facts``, numbered after the evidence), whether the answer is grounded, ``refused: true``
    with the ``refusal``'s reason when the answer declines (``gate`` or ``router`` before any
    model ran, ``model`` or ``unsupported`` when the final text declines), the answer to show
    instead of the streamed one when grounding changed it, what the router decided (when
    routing is on), and the follow-up as it was rewritten to stand alone."""
    refusal = grounded.declined
    if finish_reason == "refused":
        refusal = REFUSED_BY_ROUTER if route is not None else REFUSED_BY_GATE
    by_n = {e.n: e for e in evidence}
    done: dict[str, Any] = {
        "done": True,
        "finish_reason": finish_reason,
        "citations": [*(by_n[n].public() for n in grounded.cited if n in by_n),
                      *cited_facts(grounded, facts, len(evidence))],
        "grounded": grounded.grounded,
    }
    if refusal is not None:
        done["refused"] = True
        done["refusal"] = refusal
    if grounded.changed:
        done["text"] = grounded.text
    if model:
        done["model"] = model
    if route is not None:
        done["route"] = route
    if standalone is not None:
        done["standalone"] = standalone
    return done


def failure_for(exc: Exception, closing: bool) -> Failure:
    """The ``error`` event an exception ends an answer with (``closing``: the gateway
    drains); its detail never leaves."""
    if isinstance(exc, QueueTimeout):
        return QUEUE_TIMEOUT
    if isinstance(exc, QueueClosed):
        return SHUTTING_DOWN_WAITING
    if isinstance(exc, DeadlinePassed):
        return SHUTTING_DOWN if closing else GENERATION_TIMEOUT
    if isinstance(exc, UpstreamUnavailable):
        return Failure("failed", "upstream_unavailable", "No model server is available.")
    if isinstance(exc, UpstreamFailure):
        return Failure("failed", exc.code, exc.message)
    if isinstance(exc, prompt.PromptTooLarge):
        return Failure("failed", "prompt_too_large",
                       "The question does not fit the model's context.")
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    log.error("answer failed: %s at %s:%s", type(exc).__name__,
              where.filename if where else "?", where.lineno if where else "?")
    return INTERNAL


def _number(value: Any) -> float | None:
    return round(float(value), 2) if isinstance(value, int | float) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def sample_of(run: Run) -> Sample:
    """The metrics sample for a settled run: numbers and an outcome word only."""
    granted = run.ticket.granted_at
    timings = run.finish.timings if run.finish else {}
    usage = run.finish.usage if run.finish else {}
    return Sample(
        at=time.time(),
        outcome=run.outcome,
        latency_ms=round((time.monotonic() - run.started) * 1000, 1),
        queue_wait_ms=round(run.ticket.waited_s * 1000, 1) if granted else None,
        ttft_ms=round((run.first_token - granted) * 1000, 1)
        if run.first_token and granted else None,
        decode_tps=_number(timings.get("predicted_per_second")),
        prompt_tokens=_int(usage.get("prompt_tokens"))
        or (run.prompt.tokens if run.prompt else None),
        output_tokens=_int(usage.get("completion_tokens") or timings.get("predicted_n")),
        cached_tokens=_int(timings.get("cache_n")),
    )


def record(gateway: Gateway, run: Run) -> None:
    """Count a settled run in the metrics."""
    if run.outcome == "cancelled" and run.ticket.granted_at is None:
        gateway.metrics.queue_left += 1
    gateway.metrics.settle(sample_of(run))


async def route_evidence(gateway: Gateway, ask: AskRequest, hits: Sequence[Hit]
                         ) -> tuple[Sequence[Hit], routing.Decision | None]:
    """The evidence for the answer call: the router's choice on its slot when routing is on
    (counted in the metrics), else the hybrid order."""
    settings = gateway.config.routing
    if settings is None:
        return hits[:gateway.config.passages], None
    decision = await routing.decide(gateway, settings, ask, hits)
    gateway.metrics.route(decision.sample())
    return decision.hits, decision


def rewrites_followup(gateway: Gateway, ask: AskRequest) -> bool:
    """Whether this question comes with history, refers back to it (``refers_back``: a
    question that stands alone is neither rewritten nor let through the gate by the
    conversation) and the gateway rewrites follow-ups."""
    return (gateway.config.followups is not None and bool(ask.history)
            and refers_back(ask.question))


async def standalone(gateway: Gateway, ask: AskRequest, hits: Sequence[Hit]
                     ) -> tuple[AskRequest, Sequence[Hit]]:
    """A follow-up rewritten to stand alone (when that is on) and the passages its search
    finds with the earlier answers in view (a rewrite joining two questions only searches:
    the request stays as asked); a follow-up the rewrite leaves as asked is searched the same
    way. The passages stay as they were when the gate refuses that search. No passages (the
    gate refused the question as asked) and no rewrite the gate passes mean a refusal."""
    settings = gateway.config.followups
    if settings is None or not rewrites_followup(gateway, ask):
        return ask, hits
    rewritten = await followup.rewrite(gateway, settings, ask)
    if not hits and rewritten.searched == ask.question:
        return ask, hits
    # Searched with the earlier answers in view: "Why did Teo leave Berlin?" alone finds the
    # Lisbon post's "why leave a good job"; after "In June 2020, to join Northwind Maps." it
    # finds the move's own post. The earlier question would name the wrong place after "Where
    # did Teo work before Northwind Maps?", and after "What award did Teo win in 2021?" a
    # rejected rewrite of "What came with the prize?" found the award, not the post about it.
    result = await asyncio.to_thread(gateway.index.search, rewritten.searched,
                                     [routing.spoken(h.answer) for h in ask.history], "hybrid",
                                     gateway.search_depth, None, ask.lang)
    read = ask if rewritten.question == ask.question else replace(ask, question=rewritten.question)
    return read, result.hits if result.answerable else hits


async def prepare(gateway: Gateway, ask: AskRequest, hits: Sequence[Hit]
                  ) -> tuple[Prompt | None, routing.Decision | None, AskRequest]:
    """The answer's prompt, built for the question as it stands alone, from the evidence
    routing selects; no prompt when the router or the gate refuses the question. The question the
    prompt and grounding read comes last."""
    ask, hits = await standalone(gateway, ask, hits)
    if not hits:
        return None, None, ask
    evidence, decision = await route_evidence(gateway, ask, hits)
    if decision is not None and decision.refuses:
        return None, decision, ask
    return await assemble_prompt(gateway, ask, evidence), decision, ask


async def answer(gateway: Gateway, ticket: Ticket, ask: AskRequest, hits: Sequence[Hit],
                 started: float) -> AsyncIterator[bytes]:
    """The whole ``/api/ask`` stream for an admitted question holding ``ticket``."""
    limits = gateway.config.limits
    run = Run(ticket, started)
    try:
        async for waiting in wait_turn(ticket, limits.heartbeat_s, limits.queue_wait_s):
            yield waiting
        run.deadline = time.monotonic() + limits.generation_s
        decision: routing.Decision | None = None
        read = ask
        async for built in paced(once(lambda: prepare(gateway, ask, hits)),
                                 limits.heartbeat_s, lambda: gateway.deadline(run.deadline)):
            if built is None:
                yield HEARTBEAT
            else:
                run.prompt, decision, read = built
        route = decision.public() if decision else None
        if run.prompt is None:  # the router, or the gate after a follow-up's rewrite
            run.outcome = "refused"
            for part in refusal_events(refusal_text(gateway, read.question), route):
                yield part
            return
        evidence = assembled(run).evidence
        yield event({"sources": [e.public() for e in evidence]})
        async for delta in stream_answer(gateway, assembled(run).messages, run):
            yield delta
        reason = finished(run).reason
        grounded = settle(gateway, read.question, run)
        run.outcome = ("declined" if grounded.declined else "completed" if reason == "stop"
                       else "truncated")
        run.text = grounded.text
        rewritten = read.question if read is not ask else None
        yield event(done_payload(grounded, evidence, reason, gateway.config.model, route,
                                 rewritten, gateway.grounding.fact_passages))
    except Exception as exc:  # every path ends with one terminal event
        failure = failure_for(exc, gateway.closing)
        run.outcome = failure.outcome
        if failure.rejection:
            gateway.metrics.rejections[failure.rejection] += 1
        yield event(failure.payload())
    finally:
        ticket.release()
        record(gateway, run)
        if run.outcome in ("completed", "truncated", "declined") and run.prompt is not None:
            prime_when_idle(gateway, run.url_index, frozen_exchange(run.prompt, ask, run.text))


REFUSED_BY_GATE = "gate"
REFUSED_BY_ROUTER = "router"
"""``done.refusal`` for a question refused before any model ran: the relevance gate (the
question as asked, or its follow-up rewrite), or the router's decision."""


def refusal_events(text: str, route: dict[str, Any] | None = None) -> list[bytes]:
    """A refusal as the stream carries it: no sources, the sentence, ``done`` refused."""
    grounded = Grounded(text, [], changed=False, grounded=True)
    return [event({"sources": []}), event({"delta": text}),
            event(done_payload(grounded, [], "refused", route=route))]


def refusal_text(gateway: Gateway, question: str) -> str:
    """The artifact's refusal, opened (with premise grounding on) by what ``question`` names
    that the site never does."""
    if question and "premises" in gateway.config.grounding:
        return gateway.grounding.refusal(question, gateway.refusal)
    return gateway.refusal


async def refused(gateway: Gateway, started: float, question: str = ""
                  ) -> AsyncIterator[bytes]:
    """A refusal without the model: the artifact's sentence, no sources. Given the
    ``question`` the gate refused (and premise grounding on), the sentence opens with what it
    names that the site never does."""
    for part in refusal_events(refusal_text(gateway, question)):
        yield part
    gateway.metrics.settle(
        Sample(time.time(), "refused", round((time.monotonic() - started) * 1000, 1))
    )


def frozen_exchange(built: Prompt, ask: AskRequest, text: str) -> Messages:
    """The prompt as the next turn will send it: this question without its evidence, this
    answer without its citation markers."""
    return [*built.messages[:-1], {"role": "user", "content": ask.question},
            {"role": "assistant", "content": prompt.strip_citations(text)}]


def prime_when_idle(gateway: Gateway, url_index: int, frozen: Messages
                    ) -> asyncio.Task[bool] | None:
    """While nobody waits, put ``frozen`` (a just-frozen exchange, so that a follow-up finds
    its whole history cached, or the system prompt at start) into the answer slot's cache;
    the priming task, or None when the model is busy.

    The primer holds a place of its own, taken only when the model is idle and released in
    the task's done-callback, which runs even for a task cancelled before its first step. A
    visitor who arrives cancels it and takes the place at once (``Gateway.make_way``).
    """
    ticket = gateway.queue.enter_if_idle()
    if ticket is None:
        return None
    task = asyncio.get_running_loop().create_task(_prime(gateway, url_index, frozen))
    gateway.primers[task] = ticket

    def finished(task: asyncio.Task[bool]) -> None:
        gateway.primers.pop(task, None)
        ticket.release()

    task.add_done_callback(finished)
    return task


STARTUP_POLL_S = 1.0
"""How often the startup primer asks whether llama-server is up."""


async def prime_system_prompt(gateway: Gateway) -> None:
    """Put the stable system prompt into the answer slot's cache as soon as an upstream is up
    and the model is idle (``prime_when_idle``), so that the first visitor after a start does
    not wait for it (on two slow cores the 1.5B model read its 881 tokens in 28 s). A
    visitor who comes meanwhile takes the place, and their answer reads the prompt instead.
    ``Gateway.warmup`` says how it went (``/healthz``)."""
    messages = [{"role": "system", "content": gateway.system}]
    while True:
        task = prime_when_idle(gateway, 0, messages) if await gateway.ready() else None
        if task is not None:
            break
        await asyncio.sleep(STARTUP_POLL_S)
    await asyncio.wait({task})
    gateway.warmup = "yielded" if task.cancelled() else "done" if task.result() else "failed"


async def _prime(gateway: Gateway, url_index: int, frozen: Messages) -> bool:
    try:
        await gateway.upstream.prime(url_index, gateway.config.answer_slot, frozen)
    except Exception:
        log.debug("priming the answer slot failed")
        return False
    return True


__all__ = ["Prompt", "Run", "answer", "assemble_prompt", "done_payload", "prime_system_prompt",
           "refusal_events",
           "refused", "route_evidence", "stream_answer", "wait_turn"]
