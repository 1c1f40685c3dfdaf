"""Helpers for the gateway tests: a real llama-server, the gateway under real uvicorn on a
free port, an SSE reader, and a log recorder. Imported explicitly by the test modules."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from site_knowledge.gateway.serve import uvicorn_config
from site_knowledge.llama.model import DEFAULT_MODEL_SHA256
from site_knowledge.llama.supervisor import (
    LlamaServer,
    LlamaSpec,
    default_model,
    find_llama_server,
)

LLAMA_BINARY = find_llama_server()
MODEL = default_model()
HAVE_LLAMA = LLAMA_BINARY is not None and MODEL.is_file()
needs_llama = pytest.mark.skipif(
    not HAVE_LLAMA,
    reason="llama-server or the SmolLM2 GGUF is missing: run scripts/setup_llama.sh",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_llama(log_path: Path, port: int | None = None, slots: int = 3,
                cache_ram_mib: int = 256) -> LlamaServer:
    """A real llama-server with ``-t 1`` (the tests share two cores with it), without an API
    key: these tests also read its ``/slots`` and ``/tokenize`` directly."""
    assert LLAMA_BINARY is not None
    spec = LlamaSpec(binary=LLAMA_BINARY, model=MODEL, port=port or free_port(), slots=slots,
                     threads=1, cache_ram_mib=cache_ram_mib)
    server = LlamaServer(spec, DEFAULT_MODEL_SHA256, log=log_path.open("ab"), keyed=False)
    server.start(timeout_s=60)
    return server


def wait_warmed_up(base: str, within_s: float = 120.0) -> dict[str, Any]:
    """``/healthz`` once the gateway's startup primer is over (``warmup`` not pending)."""
    deadline = time.monotonic() + within_s
    while True:
        health: dict[str, Any] = httpx.get(base + "/healthz", timeout=10).json()
        if health["warmup"] != "pending" or time.monotonic() > deadline:
            return health
        time.sleep(0.05)


class ThreadedServer:
    """An ASGI app under real uvicorn in a background thread."""

    def __init__(self, app: Starlette, port: int | None = None) -> None:
        self.port = port or free_port()
        self.server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", self.port))
        LogRecorder.recapture()
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)


@dataclass
class Stream:
    """An ``/api/ask`` answer as the client saw it."""

    status: int
    headers: dict[str, str]
    events: list[dict[str, Any]] = field(default_factory=list)
    comments: int = 0
    body: Any = None

    @property
    def text(self) -> str:
        return "".join(e["delta"] for e in self.events if "delta" in e)

    @property
    def terminal(self) -> dict[str, Any] | None:
        """The terminal event; a ``done`` less its answer ``id`` (checked, see ``answer_id``)."""
        ends = [e for e in self.events if "done" in e or "error" in e]
        assert len(ends) <= 1, f"more than one terminal event: {ends}"
        if ends and "done" in ends[0]:
            assert self.answer_id is not None
            return {k: v for k, v in ends[0].items() if k != "id"}
        return ends[0] if ends else None

    @property
    def answer_id(self) -> str | None:
        """``done``'s answer id (32 hex digits, what ``/api/feedback`` takes); None if no done."""
        done = [e for e in self.events if "done" in e]
        if not done:
            return None
        answer_id: str = done[0]["id"]
        assert re.fullmatch(r"[0-9a-f]{32}", answer_id), answer_id
        return answer_id


def parse_sse(lines: Iterator[str], into: Stream) -> None:
    for line in lines:
        if line.startswith(":"):
            into.comments += 1
        elif line.startswith("data: "):
            into.events.append(json.loads(line[6:]))


def ask(base: str, question: str, history: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None, timeout: float = 120.0,
        client: httpx.Client | None = None) -> Stream:
    """POST a question and read the whole answer (with ``client``'s transport if given)."""
    body = {"question": question, "history": history or []}
    with contextlib.ExitStack() as stack:
        http = client or stack.enter_context(httpx.Client(timeout=timeout))
        response = stack.enter_context(
            http.stream("POST", base + "/api/ask", json=body, headers=headers or {}))
        stream = Stream(response.status_code, dict(response.headers))
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            parse_sse(response.iter_lines(), stream)
        else:
            response.read()
            stream.body = response.json()
        return stream


def metrics(base: str, token: str | None = None) -> dict[str, Any]:
    """``/metrics``; with the gateway's ``token``, the detail (samples, token totals) too."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    response = httpx.get(base + "/metrics", headers=headers, timeout=10)
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    return data


class LogRecorder(logging.Handler):
    """Every log record of the process at DEBUG, named by logger, for the no-content checks.

    uvicorn's own loggers do not propagate to the root (its logging config says so, and it
    is applied anew by each ``uvicorn.Config``), so the recorder also sits on every logger
    that writes without propagating, and ``ThreadedServer`` calls ``recapture`` after
    configuring.
    """

    LOGGERS = ("site_knowledge", "uvicorn", "uvicorn.error", "uvicorn.access", "httpx")
    active: ClassVar[list[LogRecorder]] = []

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        self.lines: list[str] = []
        self._levels: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def _loggers(self) -> list[logging.Logger]:
        """The root, and every logger that writes somewhere without propagating to it (one
        without handlers writes nothing, and uvicorn would read a handler as "log access")."""
        named = [logging.getLogger(name) for name in logging.root.manager.loggerDict]
        return [logging.getLogger(),
                *(lg for lg in named if not lg.propagate and lg.handlers)]

    def capture(self) -> None:
        for name in self.LOGGERS:
            self._levels.setdefault(name, logging.getLogger(name).level)
            logging.getLogger(name).setLevel(logging.DEBUG)
        for logger in self._loggers():
            if self not in logger.handlers:
                logger.addHandler(self)

    @classmethod
    def recapture(cls) -> None:
        for recorder in cls.active:
            recorder.capture()

    def __enter__(self) -> LogRecorder:
        LogRecorder.active.append(self)
        self.capture()
        return self

    def __exit__(self, *exc: object) -> None:
        LogRecorder.active.remove(self)
        for logger in self._loggers():
            logger.removeHandler(self)
        for name, level in self._levels.items():
            logging.getLogger(name).setLevel(level)


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
        messages = (await request.json())["messages"]
        return JSONResponse({"prompt": "|".join(m["content"] for m in messages)})

    async def completion(self, request: Request) -> Response:
        body = await request.json()
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


def children_named(pid: int, name: str) -> list[int]:
    """Live child processes of ``pid`` whose command is ``name`` (Linux ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and comm == name and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def process_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2:].split()[0] != "Z"


class Serve:
    """``site-knowledge serve`` on the example site as a real subprocess, on free ports,
    with llama-server at ``--threads 1`` running SmolLM2-135M unless ``extra`` names a
    model."""

    def __init__(self, site_dir: Path, *extra: str, llama_port: int | None = None) -> None:
        self.ports = {"--port": free_port(), "--gateway-port": free_port(),
                      "--llama-port": llama_port or free_port()}
        model = [] if {"--model", "--model-preset"} & set(extra) else [
            "--model-preset", "smollm2-135m"]
        mode = [] if "--mode" in extra else ["--mode", "public"]
        args = [sys.executable, "-m", "site_knowledge.cli", "serve", str(site_dir),
                "--threads", "1", *mode, *model, *extra]
        for flag, port in self.ports.items():
            args += [flag, str(port)]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.printed: list[str] = []

    @property
    def gateway(self) -> str:
        return f"http://127.0.0.1:{self.ports['--gateway-port']}"

    @property
    def site(self) -> str:
        return f"http://127.0.0.1:{self.ports['--port']}"

    @property
    def llama_pids(self) -> list[int]:
        return children_named(self.proc.pid, "llama-server")

    def wait_started(self) -> Serve:
        """Read what ``serve`` prints up to its last line, "Ctrl-C ...", once all runs."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.printed.append(line)
            if line.startswith("Ctrl-C"):
                break
        assert any(self.site in line for line in self.printed), (self.printed, self.stderr())
        return self

    def stderr(self) -> str:
        """Everything ``serve`` wrote to stderr (waits for it to exit)."""
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def __enter__(self) -> Serve:
        return self

    def __exit__(self, *exc: object) -> None:
        pids = self.llama_pids
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
