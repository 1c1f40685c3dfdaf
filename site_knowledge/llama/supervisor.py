"""Running llama-server: the command line, start, readiness, stop, and a supervisor that
restarts it when it dies.

The model is verified before each start; llama-server listens on loopback only, on a port
nobody else holds, and dies with the process that started it.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

from .cpu import repack_by_default
from .model import DEFAULT_MODEL_FILE, ModelVerificationError, verify_model

LLAMA_SDIST_VERSION = "11434.0.0"
LLAMA_BUILD = "portable"
"""The name of ``scripts/setup_llama.sh``'s build recipe, changed whenever its flags change so
that a binary built the old way is rebuilt rather than found (the ``-march=native`` build
crashed on CPUs with AMX)."""


def cache_dir() -> Path:
    root = os.environ.get("SITE_KNOWLEDGE_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "site-knowledge"


def build_dir() -> Path:
    """Where ``scripts/setup_llama.sh`` installs llama-server (it asks this function)."""
    return cache_dir() / f"llama-server-{LLAMA_SDIST_VERSION}-{LLAMA_BUILD}"


def find_llama_server(explicit: str | None = None) -> Path | None:
    """The llama-server binary: explicit, ``$SITE_KNOWLEDGE_LLAMA_SERVER``, the setup
    script's cache, then ``PATH``."""
    candidates = [
        explicit,
        os.environ.get("SITE_KNOWLEDGE_LLAMA_SERVER"),
        str(build_dir() / "llama-server"),
        shutil.which("llama-server"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


def default_model() -> Path:
    env = os.environ.get("SITE_KNOWLEDGE_MODEL")
    return Path(env) if env else cache_dir() / "models" / DEFAULT_MODEL_FILE


@dataclass(frozen=True)
class LlamaSpec:
    """How to run llama-server. ``ctx_per_slot`` × ``slots`` is the ``-c`` total.

    ``cache_reuse`` (KV shifting of cached chunks) keeps the frozen history cached when the
    four-exchange window slides and the oldest exchange leaves the prompt. ``repack`` is
    llama.cpp's weight repacking; ``None`` leaves it to this CPU (`cpu.repack_by_default`: off
    where it has AVX-512, where the first token comes sooner without it).
    """

    binary: Path
    model: Path
    port: int = 8081
    host: str = "127.0.0.1"
    slots: int = 3
    ctx_per_slot: int = 4096
    threads: int | None = None
    cache_ram_mib: int = 1024
    cache_reuse: int = 256
    extra: tuple[str, ...] = field(default_factory=tuple)
    repack: bool | None = None

    def command(self) -> list[str]:
        cmd = [
            str(self.binary),
            "-m", str(self.model),
            "--host", self.host,
            "--port", str(self.port),
            "-np", str(self.slots),
            "-c", str(self.slots * self.ctx_per_slot),
            "--metrics",
            "--cache-ram", str(self.cache_ram_mib),
            "--cache-reuse", str(self.cache_reuse),
            "--jinja",
            "--no-webui",
        ]
        if self.threads:
            cmd += ["-t", str(self.threads), "-tb", str(self.threads)]
        if not (repack_by_default() if self.repack is None else self.repack):
            cmd.append("--no-repack")
        return cmd + list(self.extra)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


class LlamaFailure(RuntimeError):
    """llama-server could not be started or verified; the message says why."""


class PortTaken(LlamaFailure):
    """Another process already listens on llama-server's port."""


# Runs in the child before llama-server: ask the kernel to SIGKILL it when its parent dies
# (PR_SET_PDEATHSIG, Linux), so that even a SIGKILLed ``serve`` leaves no llama-server
# behind holding the port; a parent already gone by then means exit at once.
_PDEATHSIG = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(1)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


def tied_to_this_process(command: list[str]) -> list[str]:
    """``command`` started so that it dies with this process where the OS allows it.

    The signal goes to the child when the *thread* that started it ends, so the thread that
    starts llama-server must live as long as it should (``Supervisor`` keeps one).
    """
    if not sys.platform.startswith("linux"):
        return command
    return [sys.executable, "-c", _PDEATHSIG, str(os.getpid()), *command]


def port_in_use(host: str, port: int) -> bool:
    """Whether some process listens on ``host:port`` (a bind there fails)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


class LlamaServer:
    """One llama-server process: verified model, a port of its own, a process group.

    It answers for itself only: ``/health`` counts once ``/props`` names this process's
    one-time alias, so a stranger on the port is never taken for it. Keyed (the default),
    each process gets an API key of its own (``api_key``, handed over in its environment,
    so no command line shows it): llama-server then refuses every request without it but
    ``/health``, and only the holder of this object can send it prompts.
    """

    def __init__(self, spec: LlamaSpec, expected_sha256: str,
                 log: IO[bytes] | int | None = subprocess.DEVNULL, *, keyed: bool = True) -> None:
        self.spec = spec
        self.expected_sha256 = expected_sha256
        self.log = log
        self.keyed = keyed
        self.process: subprocess.Popen[bytes] | None = None
        self.model_sha256: str | None = None
        self.api_key: str | None = None
        self.identity = f"site-knowledge-{secrets.token_hex(8)}"

    @property
    def headers(self) -> dict[str, str]:
        """What a client sends with each request: the key, when the process has one."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def start(self, timeout_s: float = 120.0) -> None:
        """Verify the model, check the port is free, start the process, and wait until it
        answers ``/health`` as itself.

        Raises:
            ModelVerificationError: the model file is missing or differs.
            PortTaken: another process listens on the port.
            LlamaFailure: the process exited, or never became ready.
        """
        self.model_sha256 = None
        verified = verify_model(self.spec.model, self.expected_sha256)
        if port_in_use(self.spec.host, self.spec.port):
            raise PortTaken(
                f"port {self.spec.port} on {self.spec.host} is already in use by another "
                "process; refusing to start llama-server there (stop that process or choose "
                "another --llama-port)")
        command = [*self.spec.command(), "--alias", self.identity]
        env = {k: v for k, v in os.environ.items() if k != "LLAMA_API_KEY"}
        self.api_key = secrets.token_urlsafe(32) if self.keyed else None
        if self.api_key:
            env["LLAMA_API_KEY"] = self.api_key  # llama-server's --api-key, out of sight
        self.process = subprocess.Popen(
            tied_to_this_process(command), stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True, env=env,
        )
        self.wait_ready(timeout_s)
        self.model_sha256 = verified

    def wait_ready(self, timeout_s: float) -> None:
        """Wait for ``/health`` to say ok while ``/props`` names this process.

        Raises:
            LlamaFailure: the process exited, another process answers for the port, or the
                deadline passed (the process is then stopped).
        """
        deadline = time.monotonic() + timeout_s
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self.process is None or self.process.poll() is not None:
                    code = self.process.returncode if self.process else None
                    raise LlamaFailure(f"llama-server exited with {code} before it was ready")
                try:
                    if client.get(self.spec.url + "/health").status_code == 200:
                        self._check_identity(client)
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        self.stop()
        raise LlamaFailure("llama-server did not become ready in time")

    def _check_identity(self, client: httpx.Client) -> None:
        props = client.get(self.spec.url + "/props", headers=self.headers)
        try:
            data = props.json() if props.status_code == 200 else None
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict) or data.get("model_alias") != self.identity:
            self.stop()
            raise PortTaken(f"another process answers on {self.spec.url}; refusing to use it")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """Kill at once (the tests' "server died mid-answer")."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.model_sha256 = None

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``grace_s``."""
        self.model_sha256 = None
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Supervisor:
    """Keeps one llama-server running: starts it, and when it dies or hangs restarts it with
    back-off, the model verified anew each time.

    Liveness: every ``probe_every_s`` it asks ``/health`` with a deadline of
    ``probe_timeout_s``; after ``probe_failures`` unanswered probes in a row (a process
    stopped by SIGSTOP, or wedged) it kills the process and restarts it like a dead one.
    One thread does all of it, so the parent-death signal stays tied to a live thread.
    ``state`` is ``starting``, ``ready``, ``restarting`` or ``stopped``; ``model_sha256`` is
    set only while a verified process is ready.
    """

    def __init__(self, server: LlamaServer, backoff_s: tuple[float, ...] = (1, 2, 4, 8, 15, 30),
                 ready_timeout_s: float = 120.0, probe_every_s: float = 5.0,
                 probe_timeout_s: float = 5.0, probe_failures: int = 3) -> None:
        self.server = server
        self.backoff_s = backoff_s
        self.ready_timeout_s = ready_timeout_s
        self.probe_every_s = probe_every_s
        self.probe_timeout_s = probe_timeout_s
        self.probe_failures = probe_failures
        self.hangs = 0
        self._state = "stopped"
        self.restarts = 0
        self._stopping = threading.Event()
        self._grace_s = 10.0
        self._first = threading.Event()
        self._failure: BaseException | None = None
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> str:
        """``starting``, ``ready``, ``restarting`` or ``stopped``; a process found dead is
        ``restarting`` at once, before the supervising thread notices."""
        if self._state == "ready" and not self.server.running:
            return "restarting"
        return self._state

    @property
    def model_sha256(self) -> str | None:
        """The verified digest of the process now serving, or ``None``."""
        return self.server.model_sha256 if self.state == "ready" else None

    def credentials(self) -> dict[str, str] | None:
        """The headers a request to llama-server carries (its key) while it is ready, and
        ``None`` otherwise: nothing is sent to the port while the process there is not the
        verified one this supervisor started (``upstream.Upstream``'s ``credentials``)."""
        return self.server.headers if self.state == "ready" else None

    def start(self) -> None:
        """Start llama-server and return once it is ready.

        Raises:
            ModelVerificationError, PortTaken, LlamaFailure: the first start failed; nothing
                is left running.
        """
        self._state = "starting"
        self._thread = threading.Thread(target=self._run, name="llama-supervisor", daemon=True)
        self._thread.start()
        self._first.wait()
        if self._failure is not None:
            self._thread.join()
            self._state = "stopped"
            raise self._failure

    def _run(self) -> None:
        try:
            self.server.start(self.ready_timeout_s)
        except BaseException as exc:  # handed to start(), which raises it
            self._failure = exc
            self._first.set()
            return
        self._state = "ready"
        self._first.set()
        failures = 0
        next_probe = time.monotonic() + self.probe_every_s
        while not self._stopping.is_set():
            if not self.server.running:
                self._restart()
                failures, next_probe = 0, time.monotonic() + self.probe_every_s
                continue
            self._stopping.wait(min(0.5, max(0.0, next_probe - time.monotonic())))
            if self._stopping.is_set() or time.monotonic() < next_probe:
                continue
            next_probe = time.monotonic() + self.probe_every_s
            failures = 0 if self._answers() else failures + 1
            if failures >= self.probe_failures and self.server.running:
                self.hangs += 1
                print(f"llama-server did not answer /health {failures} times in a row "
                      f"(each within {self.probe_timeout_s:g} s); killing it", file=sys.stderr,
                      flush=True)
                self.server.kill()
        self.server.stop(self._grace_s)  # from this thread: its end would SIGKILL the child

    def _answers(self) -> bool:
        """Whether ``/health`` answers 200 within the probe's deadline."""
        try:
            response = httpx.get(self.server.spec.url + "/health", timeout=self.probe_timeout_s)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    def _restart(self) -> None:
        self._state = "restarting"
        self.server.model_sha256 = None
        code = self.server.process.returncode if self.server.process else None
        print(f"llama-server exited ({code}); restarting it", file=sys.stderr, flush=True)
        for attempt, pause in enumerate(self._pauses()):
            if self._stopping.wait(pause):
                return
            try:
                self.server.start(self.ready_timeout_s)
            except Exception as exc:  # any failure is retried: this thread must not end
                print(f"llama-server restart {attempt + 1} failed: {exc}", file=sys.stderr,
                      flush=True)
                continue
            self.restarts += 1
            self._state = "ready"
            print("llama-server is back", file=sys.stderr, flush=True)
            return

    def _pauses(self) -> Iterator[float]:
        yield from self.backoff_s
        while True:
            yield self.backoff_s[-1]

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop supervising and stop llama-server (SIGTERM, SIGKILL after ``grace_s``)."""
        self._grace_s = grace_s
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        self.server.stop(grace_s)
        self._state = "stopped"


__all__ = [
    "LlamaFailure", "LlamaServer", "LlamaSpec", "ModelVerificationError", "PortTaken",
    "Supervisor", "cache_dir", "default_model", "find_llama_server",
]
