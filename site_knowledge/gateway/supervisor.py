"""Running llama-server: the command line, start, readiness, stop.

The model is verified before the process starts; llama-server listens on loopback only.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

from .model import DEFAULT_MODEL_FILE, ModelVerificationError, verify_model

LLAMA_SDIST_VERSION = "11434.0.0"


def cache_dir() -> Path:
    root = os.environ.get("SITE_KNOWLEDGE_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "site-knowledge"


def find_llama_server(explicit: str | None = None) -> Path | None:
    """The llama-server binary: explicit, ``$SITE_KNOWLEDGE_LLAMA_SERVER``, the setup
    script's cache, then ``PATH``."""
    candidates = [
        explicit,
        os.environ.get("SITE_KNOWLEDGE_LLAMA_SERVER"),
        str(cache_dir() / f"llama-server-{LLAMA_SDIST_VERSION}" / "llama-server"),
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
    four-exchange window slides and the oldest exchange leaves the prompt.
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
        return cmd + list(self.extra)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


class LlamaServer:
    """One supervised llama-server process."""

    def __init__(self, spec: LlamaSpec, expected_sha256: str,
                 log: IO[bytes] | int | None = subprocess.DEVNULL) -> None:
        self.spec = spec
        self.expected_sha256 = expected_sha256
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.model_sha256: str | None = None

    def start(self, timeout_s: float = 120.0) -> None:
        """Verify the model, start the process, and wait for ``/health`` to say ok.

        Raises:
            ModelVerificationError: the model file is missing or differs.
            RuntimeError: the process exited or never became ready.
        """
        self.model_sha256 = verify_model(self.spec.model, self.expected_sha256)
        self.process = subprocess.Popen(
            self.spec.command(), stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.wait_ready(timeout_s)

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(f"llama-server exited with {self.process.returncode}")
                try:
                    if client.get(self.spec.url + "/health").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("llama-server did not become ready in time")

    def kill(self) -> None:
        """Kill at once (the tests' "server died mid-answer")."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self, grace_s: float = 10.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


__all__ = [
    "LlamaServer", "LlamaSpec", "ModelVerificationError", "cache_dir", "default_model",
    "find_llama_server",
]
