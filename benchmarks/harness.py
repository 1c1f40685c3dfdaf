"""Real servers the tests and the benchmarks share: free ports, llama-server, an ASGI app under
real uvicorn in a thread, ``/api/ask`` and ``/metrics`` as a client sees them, ``site-knowledge
serve`` as a subprocess, and a recorder of every log line (the no-content checks)."""

from __future__ import annotations

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
import uvicorn
from starlette.applications import Starlette

from site_knowledge.gateway.serve import uvicorn_config
from site_knowledge.llama.model import DEFAULT_MODEL_SHA256
from site_knowledge.llama.supervisor import LlamaServer, LlamaSpec, default_model, find_llama_server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_llama(log_path: Path, port: int | None = None, slots: int = 3,
                cache_ram_mib: int = 256, threads: int = 1, cache_reuse: int = 256,
                extra: tuple[str, ...] = (), model: Path | None = None,
                model_sha256: str = DEFAULT_MODEL_SHA256, repack: bool | None = None
                ) -> LlamaServer:
    """A real llama-server on ``model`` (default: the embedded default model), ``-t 1`` unless
    ``threads`` says otherwise (the tests share two cores with it), logging to ``log_path``.
    Without an API key: the tests and benchmarks also read its ``/slots`` and ``/tokenize``
    directly, as the operator of a bare llama-server does.

    Raises:
        SystemExit: llama-server is not installed.
    """
    binary = find_llama_server()
    if binary is None:
        raise SystemExit("llama-server not found: run scripts/setup_llama.sh")
    spec = LlamaSpec(binary=binary, model=model or default_model(), port=port or free_port(),
                     slots=slots, threads=threads, cache_ram_mib=cache_ram_mib,
                     cache_reuse=cache_reuse, extra=extra, repack=repack)
    server = LlamaServer(spec, model_sha256, log=log_path.open("ab"), keyed=False)
    server.start(timeout_s=120)
    return server


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
