"""Helpers for the gateway tests: whether llama-server is here, a scripted stand-in for it, and
the real servers the benchmarks share (``benchmarks.harness``, re-exported). Imported
explicitly by the test modules."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from benchmarks.harness import LogRecorder as LogRecorder
from benchmarks.harness import Serve as Serve
from benchmarks.harness import Stream as Stream
from benchmarks.harness import ThreadedServer as ThreadedServer
from benchmarks.harness import ask as ask
from benchmarks.harness import free_port as free_port
from benchmarks.harness import metrics as metrics
from benchmarks.harness import parse_sse as parse_sse
from benchmarks.harness import process_alive as process_alive
from benchmarks.harness import start_llama as start_llama
from site_knowledge.llama.supervisor import default_model, find_llama_server

LLAMA_BINARY = find_llama_server()
MODEL = default_model()
HAVE_LLAMA = LLAMA_BINARY is not None and MODEL.is_file()
needs_llama = pytest.mark.skipif(
    not HAVE_LLAMA,
    reason="llama-server or the SmolLM2 GGUF is missing: run scripts/setup_llama.sh",
)


def stream_until_delta(url: str, question: str, on_delta: Callable[[], object],
                       timeout: float = 180.0) -> Stream:
    """Ask, call ``on_delta()`` at the first delta (kill the upstream, say), and read the
    stream to its end."""
    stream = Stream(0, {})
    with httpx.Client(timeout=timeout) as client, client.stream(
        "POST", url + "/api/ask", json={"question": question}
    ) as response:
        stream.status = response.status_code
        lines = response.iter_lines()
        for line in lines:
            if line.startswith("data: "):
                stream.events.append(json.loads(line[6:]))
                if "delta" in stream.events[-1]:
                    on_delta()
                    break
        parse_sse(lines, stream)
    return stream


def wait_warmed_up(base: str, within_s: float = 120.0) -> dict[str, Any]:
    """``/healthz`` once the gateway's startup primer is over (``warmup`` not pending)."""
    deadline = time.monotonic() + within_s
    while True:
        health: dict[str, Any] = httpx.get(base + "/healthz", timeout=10).json()
        if health["warmup"] != "pending" or time.monotonic() > deadline:
            return health
        time.sleep(0.05)


def _chunk(content: str | None = None, finish: str | None = None) -> bytes:
    delta = {"content": content} if content is not None else {}
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


SCRIPTS: dict[str, list[bytes]] = {
    "ok": [_chunk("Slotmeter measures [1]"), _chunk(" caches [9]."), _chunk(None, "stop"),
           b"data: [DONE]\n\n"],
    "length": [_chunk("Slot"), _chunk(None, "length"), b"data: [DONE]\n\n"],
    "unknown_finish": [_chunk("x"), _chunk(None, "tool_calls"), b"data: [DONE]\n\n"],
    "malformed": [_chunk("x"), b"data: {oops\n\n"],
    "not_sse": [_chunk("x"), b"<html>proxy error</html>\n"],
    "oversized": [_chunk("y" * 200)] * 40,
    "eof": [_chunk("half an ans")],
    "done_without_finish": [_chunk("x"), b"data: [DONE]\n\n"],
    "error_event": [_chunk("x"), b'data: {"error": {"code": 500, "message": "secret detail"}}\n\n'],
    # An invented amount: what a small model says to a salary question (grounding's input).
    "invented": [_chunk("Teo earns 190 euros"), _chunk(" a month."), _chunk(None, "stop"),
                 b"data: [DONE]\n\n"],
    # A model that declines although its excerpts hold the answer (grounding's input).
    "declines": [_chunk("The site does not mention"), _chunk(" what slotmeter is."),
                 _chunk(None, "stop"), b"data: [DONE]\n\n"],
    # A sentence taken from the system prompt's facts rather than from the excerpts, as the
    # 1.5B answered a question whose evidence missed the degree (grounding's input).
    "from_facts": [_chunk("Teodor Varga studied for his bachelor's degree at Budapest "
                          "University of Technology and Economics"),
                   _chunk(" from September 2008 to June 2012."), _chunk(None, "stop"),
                   b"data: [DONE]\n\n"],
}


# Replies a real llama-server never gives (or gives only while loading), for the scripted
# upstream's /props and token-count endpoints.
REPLIES: dict[str, Response] = {
    "ok": JSONResponse({"total_slots": 3}),
    "loading503": JSONResponse({"error": {"code": 503, "message": "Loading model"}},
                               status_code=503),
    "html200": Response("<html>proxy page</html>", media_type="text/html"),
    "list200": JSONResponse([{"total_slots": 3}, {"input_tokens": 12}]),
    "string200": JSONResponse({"total_slots": "3", "input_tokens": "12"}),
    "nested200": Response('{"total_slots": ' + "[" * 50_000 + "]" * 50_000 + "}",
                          media_type="application/json"),
}


def _route(reply: str, finish: str = "stop") -> list[bytes]:
    return [_chunk(reply), _chunk(None, finish), b"data: [DONE]\n\n"]


ROUTE_SCRIPTS: dict[str, list[bytes]] = {
    # Valid verdicts, played on demand (a real model gives them only when it chooses to).
    "not_on_site": _route('{"subject": "x", "intent": "not_on_site", "source_ids": []}'),
    "unsafe": _route('{"subject": "x", "intent": "unsafe", "source_ids": []}'),
    "answers": _route('{"answers": true}'),
    "does_not_answer": _route('{"answers": false}'),
}

MALFORMED_ROUTES: dict[str, list[bytes]] = {
    # Routing replies a schema-constrained real model cannot give: each fails validation.
    "malformed_json": _route('{"subject": "slotmeter", "intent": "answer", "source_ids": ["1"'),
    "not_an_object": _route('["answer"]'),
    "missing_field": _route('{"subject": "slotmeter", "intent": "answer"}'),
    "bad_intent": _route('{"subject": "slotmeter", "intent": "chat", "source_ids": []}'),
    "unknown_id": _route('{"subject": "slotmeter", "intent": "answer", "source_ids": ["99"]}'),
    "duplicate_id": _route('{"subject": "x", "intent": "answer", "source_ids": ["2", "2"]}'),
    "oversized": _route('{"subject": "x", "intent": "answer", "source_ids": ["1", "2", "3", "4"]}'),
    "truncated": _route('{"subject": "slotmeter", "intent": "answer", "source_ids": ["1', "length"),
}
ROUTE_SCRIPTS.update(MALFORMED_ROUTES)

REWRITE_SCRIPTS: dict[str, list[bytes]] = {
    # Follow-up rewrites played on demand: one that a real model gives when it resolves the
    # pronoun, one that slips in a word nobody said, one joining two questions (each replayed
    # the same every time).
    "kestrel": _route('{"question": "What did Teo build at Kestrel Analytics?"}'),
    "invented": _route('{"question": "What did Teo build in Munich?"}'),
    "district": _route('{"question": "Which district of Vienna does Teo live in?"}'),
    # Two questions joined into one, as a small model sometimes writes.
    "joined": _route('{"question": "Where did Teo work before Northwind Maps? What did he '
                     'build there?"}'),
    "truncated": _route('{"question": "What did Teo build at', "length"),
}


async def _sent(request: Request) -> Any:
    """The request's JSON body, or None when the gateway hung up while sending it (it gives a
    priming request up when a visitor's question arrives): llama-server drops such a request."""
    try:
        return await request.json()
    except ClientDisconnect:
        return None


class ScriptedUpstream:
    """A stand-in llama-server whose chat endpoint plays ``SCRIPTS[mode]`` (for a routing
    call, one with a ``response_format``: ``ROUTE_SCRIPTS[route_mode]``, and
    ``ROUTE_SCRIPTS[check_mode]`` for the check of a refusal; for a follow-up rewrite,
    ``REWRITE_SCRIPTS[rewrite_mode]``), and whose ``/props`` and token
    counter answer ``REPLIES[props]`` and ``REPLIES[count]``."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.script: list[bytes] | None = None
        """Played instead of ``SCRIPTS[mode]`` when set (the fuzz test's generated replies)."""
        self.route_mode = "malformed_json"
        self.check_mode = "does_not_answer"
        self.rewrite_mode = "kestrel"
        self.props = "ok"
        self.count: str | None = None
        self.requests: list[dict[str, Any]] = []
        self.primed: list[str] = []
        self.prime_delay = 0.0
        self.app = Starlette(routes=[
            Route("/health", lambda r: JSONResponse({"status": "ok"})),
            Route("/props", lambda r: REPLIES[self.props]),
            Route("/v1/chat/completions/input_tokens", self.input_tokens, methods=["POST"]),
            Route("/v1/chat/completions", self.chat, methods=["POST"]),
            Route("/apply-template", self.template, methods=["POST"]),
            Route("/completion", self.completion, methods=["POST"]),
        ])

    async def input_tokens(self, request: Request) -> Response:
        if self.count is None:
            return JSONResponse({"error": "not found"}, status_code=404)
        return REPLIES[self.count]

    async def template(self, request: Request) -> Response:
        body = await _sent(request)
        if body is None:
            return Response(status_code=499)
        return JSONResponse({"prompt": "|".join(m["content"] for m in body["messages"])})

    async def completion(self, request: Request) -> Response:
        body = await _sent(request)
        if body is None:
            return Response(status_code=499)
        mine = len(self.primed)
        self.primed.append("started")
        started = time.monotonic()
        while time.monotonic() - started < self.prime_delay:
            if await request.is_disconnected():
                self.primed[mine] = "abandoned"  # the gateway gave the priming request up
                return Response(status_code=499)
            await asyncio.sleep(0.05)
        self.primed[mine] = "done"
        assert body["n_predict"] == 0 and body["id_slot"] == 1 and body["cache_prompt"]
        return JSONResponse({"content": ""})

    async def chat(self, request: Request) -> Response:
        self.requests.append(await request.json())
        if self.mode == "status500":
            return JSONResponse({"error": "boom"}, status_code=500)
        if self.mode == "busy503":
            return JSONResponse({"error": "no slot"}, status_code=503)
        schema = self.requests[-1].get("response_format", {}).get("json_schema", {})
        script = {"route": ROUTE_SCRIPTS[self.route_mode],
                  "check": ROUTE_SCRIPTS[self.check_mode],
                  "question": REWRITE_SCRIPTS[self.rewrite_mode]}.get(
            schema.get("name"), SCRIPTS[self.mode] if self.script is None else self.script)

        async def body() -> Iterator[bytes]:  # type: ignore[misc]
            for part in script:
                yield part

        return StreamingResponse(body(), media_type="text/event-stream")


