"""Resident memory of llama-server with one slot (``-c 4096``) and three (``-c 12288``),
each after every slot has served one prompt of about a thousand tokens.

    .venv/bin/python -m benchmarks.bench_llama_rss [--threads 2]

Reads VmRSS and VmHWM from /proc (Linux).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import httpx

from benchmarks._llama import LOG, chat
from benchmarks.harness import start_llama

FILLER = ("The quick brown fox jumps over the lazy dog while the river runs to the sea. ") * 60


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def measure(slots: int, threads: int, cache_ram: int) -> dict[str, float]:
    server = start_llama(LOG, slots=slots, cache_ram_mib=cache_ram, threads=threads)
    try:
        assert server.process is not None
        pid = server.process.pid
        idle = status_kib(pid, "VmRSS")
        with httpx.Client(timeout=600, limits=httpx.Limits(max_keepalive_connections=0)) as client:
            for slot in range(slots):
                chat(client, server.spec.url, {
                    "id_slot": slot, "cache_prompt": True, "max_tokens": 8,
                    "messages": [{"role": "user", "content": f"{slot} {FILLER}"}]})
        return {"slots": slots, "ctx_total": slots * 4096,
                "rss_idle_mib": round(idle / 1024, 1),
                "rss_warm_mib": round(status_kib(pid, "VmRSS") / 1024, 1),
                "rss_peak_mib": round(status_kib(pid, "VmHWM") / 1024, 1)}
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache-ram", type=int, default=1024)
    args = parser.parse_args()
    rows = [measure(n, args.threads, args.cache_ram) for n in (1, 3)]
    print(json.dumps({"model": "SmolLM2-135M-Instruct Q4_1", "cache_ram_mib": args.cache_ram,
                      "runs": rows,
                      "three_over_one_mib": round(rows[1]["rss_warm_mib"]
                                                  - rows[0]["rss_warm_mib"], 1)}, indent=2))


if __name__ == "__main__":
    main()
