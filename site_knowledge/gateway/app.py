"""The Starlette application: ``POST /api/ask``, ``GET /healthz``, ``GET /metrics``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from site_knowledge.grounding import is_injection
from site_knowledge.grounding.site import SiteGrounding

from . import prompt
from .admission import AdmissionQueue, QueueClosed, QueueFull, Ticket, VisitorBusy
from .answer import answer, prime_system_prompt, refused, rewrites_followup
from .config import GatewayConfig
from .control_text import neutralise_request
from .feedback import create_feedback, receive, watch
from .gaps import Ledger
from .metrics import Metrics
from .policy import (
    AskRequest,
    RateLimiter,
    Refusal,
    check_origin,
    check_token,
    parse_body,
    visitor_key,
)
from .state import Gateway
from .upstream import Upstream

if TYPE_CHECKING:
    from site_knowledge.llama.supervisor import Supervisor
    from site_knowledge.retrieval import KnowledgeIndex, SearchResult



def _error(refusal: Refusal, extra: dict[str, str]) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": refusal.code, "message": refusal.message}},
        status_code=refusal.status,
        headers={**refusal.headers, **extra},
    )


async def _read_body(request: Request, cap: int, within_s: float) -> bytes:
    """The body, at most ``cap`` bytes, all of it within ``within_s`` seconds."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise Refusal(413, "body_too_large", f"The body exceeds {cap} bytes.")
    body = b""
    try:
        async with asyncio.timeout(within_s):
            async for chunk in request.stream():
                body += chunk
                if len(body) > cap:
                    raise Refusal(413, "body_too_large", f"The body exceeds {cap} bytes.")
    except TimeoutError:
        raise Refusal(408, "body_timeout",
                      f"The body did not arrive within {within_s:g} s.") from None
    return body


def _cors(gateway: Gateway, request: Request) -> dict[str, str]:
    origin = request.headers.get("origin")
    if origin and origin in gateway.config.allow_origins:
        return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
    return {}


def without_injected_turns(ask: AskRequest) -> AskRequest:
    """The request less every earlier exchange whose question or answer tries to change the
    assistant's role or rules: such a turn never reaches the model, while the visitor's new
    question is still answered."""
    kept = tuple(e for e in ask.history
                 if not (is_injection(e.question) or is_injection(e.answer)))
    return ask if len(kept) == len(ask.history) else replace(ask, history=kept)


def _admit(gateway: Gateway, owner: bytes) -> Ticket:
    """A place in the queue for ``owner``, or the refusal that says why there is none."""
    retry = {"Retry-After": str(gateway.config.limits.queue_full_retry_after_s)}
    try:
        return gateway.queue.enter(owner)
    except VisitorBusy:
        raise Refusal(429, "visitor_busy", "Your earlier questions are still being answered; "
                      "try again shortly.", retry) from None
    except QueueFull:
        raise Refusal(429, "queue_full", "The model is busy; try again shortly.",
                      retry) from None
    except QueueClosed:
        raise Refusal(503, "shutting_down", "The gateway is restarting; try again shortly.",
                      retry) from None


def _visitor(gateway: Gateway, request: Request) -> bytes:
    """Who asks (the rate limiter's salted key), once the origin, the token, the rate limits
    and the visitor's open streams allow it; else the refusal."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    check_origin(headers.get("origin"), gateway.config.allow_origins)
    check_token(headers, gateway.config.token)
    client = request.client.host if request.client else None
    visitor = visitor_key(request.headers.items(), client, gateway.config.proxies)
    gateway.limiter.check(visitor)
    owner = gateway.limiter.key(visitor)
    limits = gateway.config.limits
    if gateway.streams.get(owner, 0) >= limits.visitor_streams:
        raise Refusal(429, "too_many_streams", "Too many answers open at once; try again "
                      "when one has ended.",
                      {"Retry-After": str(limits.queue_full_retry_after_s)})
    return owner


async def ask(request: Request) -> Response:
    """Checks in order of cost: origin and token, the rate limits, the body, then a place in
    the queue, and only then retrieval (the query encoder is the expensive part)."""
    gateway: Gateway = request.app.state.gateway
    started = time.monotonic()
    cors = _cors(gateway, request)
    limits = gateway.config.limits
    try:
        owner = _visitor(gateway, request)
        try:
            body = await _read_body(request, limits.body_bytes, limits.body_read_s)
        except ClientDisconnect:
            raise Refusal(400, "invalid_json", "The body is incomplete.") from None
        visitor_request = parse_body(body, limits)
        if "injection" in gateway.config.grounding:
            if is_injection(visitor_request.question):
                return gateway.stream(owner, watch(gateway, request.app.state.feedback,
                                                   refused(gateway, started), None), cors)
            visitor_request = without_injected_turns(visitor_request)
        # Whatever passes, no visitor text may spell a chat-template control token.
        ask_request = neutralise_request(visitor_request)
        ticket = _admit(gateway, owner)
    except Refusal as refusal:
        gateway.metrics.reject(refusal.code)
        return _error(refusal, cors)
    try:
        result: SearchResult = await run_in_threadpool(
            gateway.index.search, ask_request.question, [h.question for h in ask_request.history],
            "hybrid", gateway.search_depth, None, ask_request.lang,
        )
    except BaseException:
        ticket.release()
        raise
    # A follow-up the gate refuses ("Which district?") may still stand once rewritten:
    # it queues with no passages, and is refused after the rewrite if it still does not.
    if not result.answerable and not rewrites_followup(gateway, ask_request):
        ticket.release()
        return gateway.stream(owner, watch(gateway, request.app.state.feedback,
                                           refused(gateway, started, ask_request.question),
                                           ask_request.question), cors)
    if not ticket.active:
        gateway.make_way()
    # The answer releases the place on every path it runs; the response releases it too, for
    # a stream cancelled before the answer's first step.
    answered = answer(gateway, ticket, ask_request,
                      result.hits if result.answerable else (), started)
    return gateway.stream(owner, watch(gateway, request.app.state.feedback, answered,
                                       ask_request.question), cors, on_close=ticket.release)


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
    llama = gateway.supervisor
    ok = any(u["ok"] for u in upstreams) and (llama is None or llama.state == "ready")
    artifact = gateway.index.artifact
    body: dict[str, Any] = {
        "status": "ok" if ok else "degraded",
        "gateway": "draining" if gateway.closing else "ok",
        "upstreams": upstreams,
        # A supervised process's digest only while it answers: just after it dies, the
        # supervisor may not have noticed yet, but its health probe has.
        "model": {"name": gateway.config.model,
                  "sha256": (llama.model_sha256 if ok else None) if llama
                  else gateway.model_sha256},
        "artifact": {
            "schema": artifact.get("schema"),
            "built_at": artifact.get("built_at"),
            "sources": len(artifact.get("sources", [])),
            "passages": len(artifact.get("passages", [])),
        },
    }
    if llama is not None:
        body["llama"] = {"state": llama.state, "restarts": llama.restarts}
    body["warmup"] = gateway.warmup
    return JSONResponse(body, status_code=200 if ok else 503, headers=OPEN)


def _holds_token(gateway: Gateway, request: Request) -> bool:
    """Whether the request presents the gateway's token (private mode only)."""
    if gateway.config.token is None:
        return False
    try:
        check_token({k.lower(): v for k, v in request.headers.items()}, gateway.config.token)
    except Refusal:
        return False
    return True


async def metrics(request: Request) -> Response:
    """Public aggregates; the per-request samples and token totals only with the token."""
    gateway: Gateway = request.app.state.gateway
    detail = _holds_token(gateway, request)
    snapshot = gateway.metrics.snapshot(
        ready=await gateway.ready(),
        active=1 if gateway.queue.active else 0,
        waiting=gateway.queue.depth,
        detail=detail,
    )
    if detail:
        snapshot["content_gaps"] = request.app.state.feedback.ledger.summary()
    return JSONResponse(snapshot, headers=OPEN)


def create_app(
    index: KnowledgeIndex,
    config: GatewayConfig,
    *,
    model_sha256: str | None = None,
    upstream: Upstream | None = None,
    supervisor: Supervisor | None = None,
    ledger: Ledger | None = None,
) -> Starlette:
    """Build the gateway application for a loaded knowledge index.

    Args:
        index: the loaded ``KnowledgeIndex`` (``site_knowledge.retrieval.load_index``).
        config: upstreams, origins, token and limits.
        model_sha256: the verified model digest, reported by ``/healthz``.
        upstream: an upstream pool to use instead of one built from ``config``.
        supervisor: the llama-server this gateway runs (``serve``): ``/healthz`` reports its
            state and the digest of the process it verified, instead of ``model_sha256``.
        ledger: where refused and declined questions and votes are counted
            (``gaps.Ledger``); in memory when None.
    """
    limits = config.limits
    pool = upstream or Upstream(config.upstreams, limits,
                                credentials=supervisor.credentials if supervisor else None)
    budgets = prompt.Budgets.from_artifact(index.artifact)
    gateway = Gateway(
        index=index,
        config=config,
        upstream=pool,
        queue=AdmissionQueue(limits.queue_waiters, limits.visitor_places),
        metrics=Metrics(),
        limiter=RateLimiter(limits.visitor_requests_per_minute, limits.global_requests_per_minute,
                            per_network=limits.network_requests_per_minute),
        budgets=budgets,
        counter=prompt.TokenCounter(pool.count_tokens,
                                    budgets.context_tokens - budgets.answer_tokens),
        grounding=SiteGrounding(index),
        model_sha256=model_sha256,
        supervisor=supervisor,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warming = asyncio.create_task(prime_system_prompt(gateway))
        yield
        warming.cancel()
        for task in list(gateway.primers):
            task.cancel()
        await pool.aclose()

    app = Starlette(
        routes=[
            Route("/api/ask", ask, methods=["POST"]),
            Route("/api/ask", preflight, methods=["OPTIONS"]),
            Route("/api/feedback", receive, methods=["POST"]),
            Route("/api/feedback", preflight, methods=["OPTIONS"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.gateway = gateway
    app.state.feedback = create_feedback(gateway, ledger)
    return app


__all__ = ["Gateway", "create_app"]
