"""Shared pieces of the llama-server benchmarks: a built example site, where llama-server logs,
and one timed streaming chat request (the server itself: ``benchmarks.harness.start_llama``)."""

from __future__ import annotations

import json
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from evals.sites import SITES, build

LOG = Path(tempfile.gettempdir()) / "sk-bench-llama.log"
"""Where the benchmarks' llama-servers log (appended)."""

# A terminated benchmark still runs its ``finally`` blocks, which stop llama-server.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def built_site(site: str | None) -> Path:
    """The built example site: ``site`` if given, else a fresh ``mkdocs build``."""
    if site:
        return Path(site)
    return build(SITES["example"], Path(tempfile.mkdtemp(prefix="sk-bench-site-")))


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
