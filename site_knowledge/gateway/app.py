"""The Starlette application: ``POST /api/ask``, ``GET /healthz``, ``GET /metrics``."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import prompt
from .admission import AdmissionQueue, QueueFull, QueueTimeout, Ticket
from .config import GatewayConfig
from .metrics import Metrics, Sample
from .policy import (
    AskRequest,
    RateLimiter,
    Refusal,
    check_origin,
    check_token,
    parse_body,
    visitor_key,
)
from .sse import HEARTBEAT, EventStream, event
from .upstream import Delta, Finish, Started, Upstream, UpstreamFailure, UpstreamUnavailable

if TYPE_CHECKING:
    from site_knowledge.retrieval import KnowledgeIndex, SearchResult

log = logging.getLogger(__name__)


@dataclass
class Gateway:
    """Everything one running gateway holds."""

    index: KnowledgeIndex
    config: GatewayConfig
    upstream: Upstream
    queue: AdmissionQueue
    metrics: Metrics
    limiter: RateLimiter
    budgets: prompt.Budgets
    counter: prompt.TokenCounter
    model_sha256: str | None = None
    background: set[asyncio.Task[None]] = field(default_factory=set)
    _ready: tuple[float, bool] = (0.0, False)

    @property
    def system(self) -> str:
        return str(self.index.artifact["prompt"]["system"])

    @property
    def refusal(self) -> str:
        return str(self.index.artifact["prompt"]["refusal"])

    async def ready(self) -> bool:
        at, value = self._ready
        if time.monotonic() - at > 2.0:
            value = any(u["ok"] for u in await self.upstream.health())
            self._ready = (time.monotonic(), value)
        return value


def _error(refusal: Refusal, extra: dict[str, str]) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": refusal.code, "message": refusal.message}},
        status_code=refusal.status,
        headers={**refusal.headers, **extra},
    )


async def _read_body(request: Request, cap: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise Refusal(413, "body_too_large", f"The body exceeds {cap} bytes.")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise Refusal(413, "body_too_large", f"The body exceeds {cap} bytes.")
    return body


def _cors(gateway: Gateway, request: Request) -> dict[str, str]:
    origin = request.headers.get("origin")
    if origin and origin in gateway.config.allow_origins:
        return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
    return {}


async def _refused(gateway: Gateway, started: float) -> AsyncIterator[bytes]:
    yield event({"sources": []})
    yield event({"delta": gateway.refusal})
    yield event({"done": True, "finish_reason": "refused", "citations": []})
    gateway.metrics.settle(
        Sample(time.time(), "refused", (time.monotonic() - started) * 1000)
    )


async def _answer(
    gateway: Gateway, ticket: Ticket, ask: AskRequest, hits: list[Any], started: float
) -> AsyncIterator[bytes]:
    limits = gateway.config.limits
    metrics = gateway.metrics
    outcome = "cancelled"
    first_token: float | None = None
    finish: Finish | None = None
    prompt_tokens: int | None = None
    primer: tuple[int, list[dict[str, str]]] | None = None
    try:
        if not ticket.active:
            try:
                async for position in ticket.wait(limits.heartbeat_s, limits.queue_wait_s):
                    yield HEARTBEAT if position is None else event({"queued": {"position": position}})
            except QueueTimeout:
                outcome = "rejected"
                metrics.rejections["queue_timeout"] += 1
                yield event({"error": {"code": "queue_timeout",
                                       "message": "Waited too long for the model; try again."}})
                return
        evidence = prompt.evidence_from_hits(hits)
        messages, evidence, prompt_tokens = await prompt.assemble(
            gateway.system, ask.history, evidence, ask.question, gateway.budgets,
            gateway.counter,
        )
        yield event({"sources": [e.public() for e in evidence]})
        payload = {
            "id_slot": gateway.config.answer_slot,
            "messages": messages,
            "cache_prompt": True,
            "temperature": 0,
            "max_tokens": gateway.budgets.answer_tokens,
            "chat_template_kwargs": {"enable_thinking": False},
        }
        answer = ""
        url_index = 0
        metrics.upstream_requests += 1
        async with aclosing(gateway.upstream.chat(payload)) as stream:
            async for item in stream:
                if isinstance(item, Started):
                    metrics.upstream_failovers += item.failovers
                    url_index = item.url_index
                elif isinstance(item, Delta):
                    if first_token is None:
                        first_token = time.monotonic()
                    answer += item.text
                    yield event({"delta": item.text})
                else:
                    finish = item
        assert finish is not None
        outcome = "completed" if finish.reason == "stop" else "truncated"
        frozen = [*messages[:-1], {"role": "user", "content": ask.question},
                  {"role": "assistant", "content": prompt.strip_citations(answer)}]
        primer = (url_index, frozen)
        done: dict[str, Any] = {
            "done": True,
            "finish_reason": finish.reason,
            "citations": prompt.citations(answer, evidence),
        }
        if gateway.config.model:
            done["model"] = gateway.config.model
        yield event(done)
    except UpstreamUnavailable:
        outcome = "failed"
        yield event({"error": {"code": "upstream_unavailable",
                               "message": "No model server is available."}})
    except UpstreamFailure as failure:
        outcome = "failed"
        yield event({"error": {"code": failure.code, "message": failure.message}})
    except prompt.PromptTooLarge:
        outcome = "failed"
        yield event({"error": {"code": "prompt_too_large",
                               "message": "The question does not fit the model's context."}})
    finally:
        was_waiting = not ticket.active and ticket.granted_at is None
        if primer is not None and outcome in ("completed", "truncated") \
                and gateway.queue.depth == 0:
            task = asyncio.get_running_loop().create_task(_prime(gateway, ticket, *primer))
            gateway.background.add(task)
            task.add_done_callback(gateway.background.discard)
        else:
            ticket.release()
        if outcome == "cancelled" and was_waiting:
            metrics.queue_left += 1
        timings = finish.timings if finish else {}
        usage = finish.usage if finish else {}
        metrics.settle(Sample(
            at=time.time(),
            outcome=outcome,
            latency_ms=round((time.monotonic() - started) * 1000, 1),
            queue_wait_ms=round(ticket.waited_s * 1000, 1) if ticket.granted_at else None,
            ttft_ms=round((first_token - ticket.granted_at) * 1000, 1)
            if first_token and ticket.granted_at else None,
            decode_tps=_number(timings.get("predicted_per_second")),
            prompt_tokens=_int(usage.get("prompt_tokens")) or prompt_tokens,
            output_tokens=_int(usage.get("completion_tokens") or timings.get("predicted_n")),
            cached_tokens=_int(timings.get("cache_n")),
        ))


async def _prime(gateway: Gateway, ticket: Ticket, url_index: int,
                 frozen: list[dict[str, str]]) -> None:
    """While nobody waits, put the just-frozen exchange into the answer slot's cache, so a
    follow-up finds its whole history cached. The model stays reserved meanwhile (nothing
    overwrites the slot); a visitor who arrives cancels the primer at once."""
    try:
        await gateway.upstream.prime(url_index, gateway.config.answer_slot, frozen)
    except Exception:
        log.debug("priming the answer slot failed")
    finally:
        ticket.release()


def _number(value: Any) -> float | None:
    return round(float(value), 2) if isinstance(value, int | float) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


async def ask(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    started = time.monotonic()
    cors = _cors(gateway, request)
    headers = {k.lower(): v for k, v in request.headers.items()}
    client = request.client.host if request.client else None
    limits = gateway.config.limits
    try:
        check_origin(headers.get("origin"), gateway.config.allow_origins)
        check_token(headers, gateway.config.token)
        try:
            body = await _read_body(request, limits.body_bytes)
        except ClientDisconnect:
            raise Refusal(400, "invalid_json", "The body is incomplete.") from None
        ask_request = parse_body(body, limits)
        gateway.limiter.check(
            visitor_key(request.headers.items(), client, gateway.config.proxies))
        result: SearchResult = await run_in_threadpool(
            gateway.index.search, ask_request.question, [h.question for h in ask_request.history]
        )
        if not result.answerable:
            return EventStream(_refused(gateway, started), headers=cors)
        try:
            ticket = gateway.queue.enter()
            if not ticket.active:
                for task in gateway.background:
                    task.cancel()  # a visitor waits: the cache primer gives way at once
        except QueueFull:
            raise Refusal(
                429, "queue_full", "The model is busy; try again shortly.",
                {"Retry-After": str(limits.queue_full_retry_after_s)},
            ) from None
    except Refusal as refusal:
        gateway.metrics.reject(refusal.code)
        return _error(refusal, cors)
    return EventStream(_answer(gateway, ticket, ask_request, list(result.hits), started),
                       headers=cors)


async def preflight(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    cors = _cors(gateway, request)
    if not cors:
        return JSONResponse({"error": {"code": "origin_not_allowed",
                                       "message": "This origin may not use the gateway."}},
                            status_code=403)
    return Response(status_code=204, headers={
        **cors,
        "Access-Control-Allow-Methods": "POST, OPTIONS",
        "Access-Control-Allow-Headers": "Content-Type, Authorization",
        "Access-Control-Max-Age": "600",
    })


OPEN = {"Access-Control-Allow-Origin": "*", "Cache-Control": "no-store"}


async def healthz(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    upstreams = await gateway.upstream.health()
    ok = any(u["ok"] for u in upstreams)
    artifact = gateway.index.artifact
    body = {
        "status": "ok" if ok else "degraded",
        "gateway": "ok",
        "upstreams": upstreams,
        "model": {"name": gateway.config.model, "sha256": gateway.model_sha256},
        "artifact": {
            "schema": artifact.get("schema"),
            "built_at": artifact.get("built_at"),
            "sources": len(artifact.get("sources", [])),
            "passages": len(artifact.get("passages", [])),
        },
    }
    return JSONResponse(body, status_code=200 if ok else 503, headers=OPEN)


async def metrics(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    snapshot = gateway.metrics.snapshot(
        ready=await gateway.ready(),
        active=1 if gateway.queue.active else 0,
        waiting=gateway.queue.depth,
    )
    return JSONResponse(snapshot, headers=OPEN)


def create_app(
    index: KnowledgeIndex,
    config: GatewayConfig,
    *,
    model_sha256: str | None = None,
    upstream: Upstream | None = None,
) -> Starlette:
    """Build the gateway application for a loaded knowledge index.

    Args:
        index: the loaded ``KnowledgeIndex`` (``site_knowledge.retrieval.load_index``).
        config: upstreams, origins, token and limits.
        model_sha256: the verified model digest, reported by ``/healthz``.
        upstream: an upstream pool to use instead of one built from ``config``.
    """
    limits = config.limits
    pool = upstream or Upstream(config.upstreams, limits)
    budgets = prompt.Budgets.from_artifact(index.artifact)
    gateway = Gateway(
        index=index,
        config=config,
        upstream=pool,
        queue=AdmissionQueue(limits.queue_waiters),
        metrics=Metrics(),
        limiter=RateLimiter(limits.visitor_requests_per_minute, limits.global_requests_per_minute),
        budgets=budgets,
        counter=prompt.TokenCounter(pool.count_tokens,
                                    budgets.context_tokens - budgets.answer_tokens),
        model_sha256=model_sha256,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for task in list(gateway.background):
            task.cancel()
        await pool.aclose()

    app = Starlette(
        routes=[
            Route("/api/ask", ask, methods=["POST"]),
            Route("/api/ask", preflight, methods=["OPTIONS"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.gateway = gateway
    return app


__all__ = ["Gateway", "create_app"]
