"""One answer's life: the model's place is freed on every path, and every path ends the stream
with exactly one terminal event. The upstream is the scripted stand-in (``ScriptedUpstream``)
because these faults sit in the gateway, not in llama-server."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from gateway_fixtures import ThreadedServer, ask, metrics

from site_knowledge.gateway.answer import answer
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.gateway.policy import AskRequest

ANSWERABLE = "What is slotmeter?"
GENEROUS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)


def test_a_primer_cancelled_before_its_first_step_still_frees_the_model(example_index, scripted):
    """Finding 1: the place handed to the cache primer was freed only in the primer's own
    ``finally``, which never runs for a task cancelled before it starts."""
    upstream, url = scripted
    upstream.mode, upstream.prime_delay = "ok", 0.0

    async def scenario() -> None:
        app = create_app(example_index, GatewayConfig(upstreams=(url,), limits=GENEROUS))
        gateway = app.state.gateway
        hits = example_index.search(ANSWERABLE, []).hits
        ticket = gateway.queue.enter()
        events = [e async for e in answer(gateway, ticket, AskRequest(ANSWERABLE, ()), hits,
                                          time.monotonic())]
        assert json.loads(events[-1][6:])["done"] is True
        # A visitor arrives before the primer has run a single step; the primer is cancelled.
        visitor = gateway.queue.enter()
        assert not visitor.active and gateway.primers, "the primer holds the model"
        for task in list(gateway.primers):
            task.cancel()
        await asyncio.sleep(0.2)
        try:
            assert visitor.active, "the model's place stayed with a primer that never ran"
            assert not gateway.primers
        finally:
            visitor.release()
            await gateway.upstream.aclose()

    asyncio.run(scenario())


def test_an_unexpected_exception_ends_the_stream_with_one_error_and_frees_the_model(
        example_index, scripted):
    upstream, url = scripted
    upstream.mode = "ok"
    app = create_app(example_index, GatewayConfig(upstreams=(url,), limits=GENEROUS))

    async def injected_fault(messages: list[dict[str, str]]) -> int:
        raise RuntimeError("injected fault")

    app.state.gateway.counter = injected_fault
    with ThreadedServer(app) as server:
        stream = ask(server.url, ANSWERABLE)
        assert stream.status == 200
        assert stream.terminal is not None, "EOF without a terminal event"
        assert stream.terminal["error"]["code"] == "internal_error"
        assert "injected" not in json.dumps(stream.events)
        snap = metrics(server.url)
        assert snap["queue"] == {**snap["queue"], "active": 0, "waiting": 0}
        assert snap["outcomes"]["failed"] == 1 and snap["outcomes"]["cancelled"] == 0


def _asgi_request(body: bytes) -> tuple[dict[str, Any], Any]:
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/api/ask", "raw_path": b"/api/ask", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8787),
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())],
    }
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    return scope, receive


def test_a_client_gone_before_the_first_byte_frees_the_model(example_index, scripted):
    """The answer's generator never starts when the response is cancelled while its headers
    are still being sent (a client gone, on a slow link): its ``finally`` cannot free the
    place, so the response must."""
    _, url = scripted

    async def scenario() -> None:
        app = create_app(example_index, GatewayConfig(upstreams=(url,), limits=GENEROUS))
        gateway = app.state.gateway
        scope, receive = _asgi_request(json.dumps({"question": ANSWERABLE}).encode())
        sent: list[str] = []

        async def slow_send(message: dict[str, Any]) -> None:
            sent.append(message["type"])
            await asyncio.sleep(0.05)

        async with app.router.lifespan_context(app):
            await app(scope, receive, slow_send)
            assert sent[0] == "http.response.start"
            assert gateway.queue.active is None, "nobody freed the model's place"

    asyncio.run(scenario())
