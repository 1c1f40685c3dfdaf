"""Shared pieces of the llama-server benchmarks: a built example site, a running server, and
one timed streaming chat request."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from site_knowledge.llama.model import DEFAULT_MODEL_SHA256
from site_knowledge.llama.supervisor import (
    LlamaServer,
    LlamaSpec,
    default_model,
    find_llama_server,
)

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "homepage"

# A terminated benchmark still runs its ``finally`` blocks, which stop llama-server.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def built_site(site: str | None) -> Path:
    """The built example site: ``site`` if given, else a fresh ``mkdocs build``."""
    if site:
        return Path(site)
    out = Path(tempfile.mkdtemp(prefix="sk-bench-site-"))
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(EXAMPLE / "mkdocs.yml"),
                    "-d", str(out)], check=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    return out


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start(slots: int, cache_ram_mib: int, threads: int, extra: tuple[str, ...] = (),
          cache_reuse: int = 256) -> LlamaServer:
    binary = find_llama_server()
    if binary is None:
        raise SystemExit("llama-server not found: run scripts/setup_llama.sh")
    spec = LlamaSpec(binary=binary, model=default_model(), port=free_port(), slots=slots,
                     threads=threads, cache_ram_mib=cache_ram_mib, cache_reuse=cache_reuse,
                     extra=extra)
    log = Path(tempfile.gettempdir()) / f"sk-bench-llama-{spec.port}.log"
    # Unkeyed: the benchmarks talk to it directly, as the operator of a bare llama-server does.
    server = LlamaServer(spec, DEFAULT_MODEL_SHA256, log=log.open("wb"), keyed=False)
    server.start()
    return server


@dataclass
class Timed:
    """One streamed request: wall-clock TTFT and total, and llama-server's own timings."""

    ttft_s: float | None
    total_s: float
    text: str
    timings: dict[str, Any] = field(default_factory=dict)


def chat(client: httpx.Client, url: str, payload: dict[str, Any]) -> Timed:
    started = time.perf_counter()
    ttft: float | None = None
    text = ""
    timings: dict[str, Any] = {}
    with client.stream("POST", url + "/v1/chat/completions",
                       json={**payload, "stream": True}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            timings = chunk.get("timings", timings)
            for choice in chunk.get("choices", []):
                content = (choice.get("delta") or {}).get("content")
                if content:
                    if ttft is None:
                        ttft = time.perf_counter() - started
                    text += content
    return Timed(ttft, time.perf_counter() - started, text, timings)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
