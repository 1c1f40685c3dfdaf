"""Answer ids, votes and the content-gap counting around ``/api/ask``.

``watch`` wraps an answer's event stream: it gives the ``done`` event an ``id`` (random, tied
to nothing about the visitor or the question), remembers for a while which pages that answer
cited, and counts refused and declined questions in the ``Ledger`` (``gaps.py``) at the
nearest page or section. ``POST /api/feedback`` takes ``{"id": ..., "vote": "up"|"down"}``
and nothing else, under the same origin, token and rate-limit policy as questions, and
counts the vote once for each page the answer cited.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from site_knowledge.grounding import heading_label

from .gaps import Ledger, Place
from .policy import RateLimiter, Refusal, check_origin, check_token, visitor_key
from .sse import event

if TYPE_CHECKING:
    from .state import Gateway

REMEMBERED = 4096
"""Answers a vote may still name; the oldest is forgotten first."""
VOTE_WINDOW_S = 24 * 3600.0
BODY_BYTES = 256
VOTES = ("up", "down")
REFUSED = ("gate", "router")
DECLINED = ("model", "unsupported")


@dataclass
class Answered:
    pages: tuple[Place, ...]
    at: float
    vote: str | None = None


@dataclass
class Feedback:
    """What the gateway keeps for votes and the content-gap report."""

    ledger: Ledger
    limiter: RateLimiter
    answers: OrderedDict[str, Answered] = field(default_factory=OrderedDict)

    def remember(self, pages: tuple[Place, ...]) -> str:
        """A new answer id for an answer citing ``pages``."""
        answer_id = secrets.token_hex(16)
        self.answers[answer_id] = Answered(pages, time.monotonic())
        oldest = next(iter(self.answers.values()))
        while len(self.answers) > REMEMBERED or time.monotonic() - oldest.at > VOTE_WINDOW_S:
            self.answers.popitem(last=False)
            oldest = next(iter(self.answers.values()))
        return answer_id

    def vote(self, answer_id: str, vote: str) -> None:
        """Count ``vote`` for each page the answer cited; a second vote replaces the first."""
        answered = self.answers.get(answer_id)
        if answered is None or time.monotonic() - answered.at > VOTE_WINDOW_S:
            raise Refusal(404, "unknown_answer", "No recent answer has this id.")
        if answered.vote == vote:
            return
        for page in answered.pages:
            if answered.vote is not None:
                self.ledger.count(answered.vote, page, by=-1)
            self.ledger.count(vote, page)
        answered.vote = vote


def _page(url: str) -> str:
    return url.split("#", 1)[0]


def _cited_pages(citations: list[dict[str, Any]]) -> tuple[Place, ...]:
    """One place per cited page (its first citation's label, the page's URL)."""
    pages: dict[str, Place] = {}
    for c in citations:
        pages.setdefault(_page(str(c["url"])), Place(_page(str(c["url"])), str(c["title"])))
    return tuple(pages.values())


def nearest(gateway: Gateway, question: str) -> Place:
    """The passage nearest ``question`` in meaning, as a place."""
    passage = gateway.index.nearest(question)
    title = gateway.index.sources_by_id[passage.source_id].title
    return Place(passage.url, heading_label(title, passage.heading))


async def watch(gateway: Gateway, feedback: Feedback, events: AsyncIterator[bytes],
                question: str | None) -> AsyncIterator[bytes]:
    """``events`` with an id in ``done``; refusals and declines counted when ``question`` is
    given (the question itself is passed on only to be kept when ``--keep-questions`` is on)."""
    sources: list[dict[str, Any]] = []
    async for chunk in events:
        if chunk.startswith(b'data: {"sources"'):
            sources = json.loads(chunk[6:])["sources"]
        elif chunk.startswith(b'data: {"done"'):
            done = json.loads(chunk[6:])
            place = None
            if question is not None and done.get("refusal") in REFUSED + DECLINED:
                place = (Place(str(sources[0]["url"]), str(sources[0]["title"])) if sources
                         and done["refusal"] in DECLINED else
                         await asyncio.to_thread(nearest, gateway, question))
                kind = "refused" if done["refusal"] in REFUSED else "declined"
                feedback.ledger.count(kind, place, question)
            cited = _cited_pages(done.get("citations", []))
            done["id"] = feedback.remember(cited or ((place,) if place else ()))
            chunk = event(done)
        yield chunk


async def receive(request: Request) -> Response:
    """``POST /api/feedback``: one vote on one answer."""
    gateway: Gateway = request.app.state.gateway
    feedback: Feedback = request.app.state.feedback
    origin = request.headers.get("origin")
    cors = ({"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
            if origin and origin in gateway.config.allow_origins else {})
    try:
        check_origin(origin, gateway.config.allow_origins)
        check_token({k.lower(): v for k, v in request.headers.items()}, gateway.config.token)
        client = request.client.host if request.client else None
        feedback.limiter.check(visitor_key(request.headers.items(), client,
                                           gateway.config.proxies))
        answer_id, vote = _parse(await _body(request))
        feedback.vote(answer_id, vote)
    except Refusal as refusal:
        return JSONResponse({"error": {"code": refusal.code, "message": refusal.message}},
                            status_code=refusal.status, headers={**refusal.headers, **cors})
    return Response(status_code=204, headers=cors)


async def _body(request: Request) -> bytes:
    body = b""
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > BODY_BYTES:
                raise Refusal(413, "body_too_large", f"The body exceeds {BODY_BYTES} bytes.")
    except ClientDisconnect:
        raise Refusal(400, "invalid_json", "The body is incomplete.") from None
    return body


def _parse(body: bytes) -> tuple[str, str]:
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise Refusal(400, "invalid_json", "The body is not JSON.") from None
    if not isinstance(value, dict) or set(value) != {"id", "vote"}:
        raise Refusal(422, "invalid_request", 'The body is {"id": ..., "vote": "up"|"down"}.')
    answer_id, vote = value["id"], value["vote"]
    if (not isinstance(answer_id, str) or len(answer_id) != 32
            or not all(c in "0123456789abcdef" for c in answer_id)):
        raise Refusal(422, "invalid_request", "The id is not an answer's id.")
    if vote not in VOTES:
        raise Refusal(422, "invalid_request", 'The vote is "up" or "down".')
    return answer_id, vote


def create_feedback(gateway: Gateway, ledger: Ledger | None) -> Feedback:
    """The feedback state for ``gateway``: votes rate-limited as questions are."""
    limits = gateway.config.limits
    return Feedback(ledger or Ledger(),
                    RateLimiter(limits.visitor_requests_per_minute,
                                limits.global_requests_per_minute))
