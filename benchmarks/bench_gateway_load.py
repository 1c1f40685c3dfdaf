"""Load and soak against the whole stack from outside: ``site-knowledge serve`` on the example
site (llama-server ``--threads 1``, SmolLM2-135M unless ``--model-preset``), real HTTP and SSE.

1. burst: 20 questions at once from one visitor. One visitor holds at most 2 places (1
   answering + 1 waiting), so 2 streams and 18 × 429 ``visitor_busy`` with ``Retry-After``;
   every stream ends with exactly one terminal event; a question a minute later completes.
2. crowd: 50 visitors at once, each from its own address through a trusted proxy
   (``--trusted-proxy 127.0.0.1/32``, ``X-Forwarded-For``): again 11 streams and 39 × 429.
3. kill: llama-server SIGKILLed at the first token of an answer: how that stream ends, and
   the seconds until a question (asked every 5 s) completes again.
4. fair: one visitor asks at its full allowance (a question every 3 s, 20 a minute, without
   waiting for answers) while another asks one question a minute, for ``--fair-minutes``:
   the first gets 429 ``visitor_busy`` beyond its 2 queue places, the second's wait for the
   model (until its first answer event) and whole answer, p50/p95.
5. soak: one question every 5 s (a fixed rotation of on-site, follow-up and off-site
   questions), per window of ``--window-minutes``: p50/p95 latency, outcomes, and the
   resident memory of ``serve`` (the gateway) and of llama-server.

Figures are machine-bound (the answers run on one CPU thread; other work on the machine
shows in the latencies); the report says what ran beside it only in the load average.

    .venv/bin/python -m benchmarks.bench_gateway_load [--soak-minutes 30] [--fair-minutes 10]
        [--model-preset NAME] [--stages burst,crowd,fair,kill,soak] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks._llama import built_site
from benchmarks.harness import Serve

QUESTIONS = [
    "What is slotmeter?",
    "Where did Teo work before Kestrel?",
    "What is the best recipe for banana bread?",
    "Which projects measure caches?",
    "What did he study?",
]


async def ask(client: httpx.AsyncClient, url: str, question: str,
              headers: dict[str, str] | None = None) -> dict[str, Any]:
    """One question: status, Retry-After, the terminal events, the wait until the first
    event that is not ``queued`` (the model's turn came) and the latency."""
    started = time.monotonic()
    waited: float | None = None
    async with client.stream("POST", url + "/api/ask", json={"question": question},
                             headers=headers or {}) as response:
        result: dict[str, Any] = {"status": response.status_code,
                                  "retry_after": response.headers.get("retry-after")}
        if response.status_code != 200:
            await response.aread()
            result["code"] = response.json()["error"]["code"]
            return result
        terminals = []
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                if waited is None and "queued" not in event:
                    waited = time.monotonic() - started
                if "done" in event or "error" in event:
                    terminals.append(event)
        result["terminals"] = terminals
        result["wait_s"] = round(waited, 2) if waited is not None else None
        result["latency_s"] = round(time.monotonic() - started, 2)
        return result


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    streams = [r for r in results if r["status"] == 200]
    refused = [r for r in results if r["status"] == 429]
    ends = [t for r in streams for t in r["terminals"]]
    return {
        "streams": len(streams),
        "refused_429": len(refused),
        "refused_codes": sorted({r.get("code") for r in refused}),
        "retry_after": sorted({r["retry_after"] for r in refused}),
        "streams_with_one_terminal": sum(len(r["terminals"]) == 1 for r in streams),
        "done": sum("done" in t for t in ends),
        "errors": sorted(t["error"]["code"] for t in ends if "error" in t),
        "other_status": sorted(r["status"] for r in results if r["status"] not in (200, 429)),
    }


async def burst(url: str, n: int, distinct: bool) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=600) as client:
        calls = [ask(client, url, QUESTIONS[0],
                     {"x-forwarded-for": f"198.51.100.{i + 1}"} if distinct else None)
                 for i in range(n)]
        return summarise(await asyncio.gather(*calls))


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


async def soak(url: str, minutes: float, every_s: float, window_minutes: float
               ) -> list[dict[str, Any]]:
    """Ask one question every ``every_s`` for ``minutes``; the figures per window."""
    start = time.monotonic()
    results: list[tuple[float, dict[str, Any]]] = []

    async def timed(client: httpx.AsyncClient, question: str) -> None:
        at = time.monotonic() - start
        results.append((at, await ask(client, url, question)))

    async with httpx.AsyncClient(timeout=600) as client:
        calls = []
        n = 0
        while time.monotonic() - start < minutes * 60:
            calls.append(asyncio.ensure_future(timed(client, QUESTIONS[n % len(QUESTIONS)])))
            n += 1
            await asyncio.sleep(max(0.0, start + n * every_s - time.monotonic()))
        await asyncio.gather(*calls)
    windows = []
    for index in range(round(minutes / window_minutes + 0.4999)):
        lo, hi = index * window_minutes * 60, (index + 1) * window_minutes * 60
        chunk = [r for at, r in results if lo <= at < hi]
        latencies = sorted(r["latency_s"] for r in chunk if "latency_s" in r)
        windows.append({
            "window_min": [round(lo / 60, 1), round(hi / 60, 1)],
            "asked": len(chunk),
            "p50_s": round(statistics.median(latencies), 2) if latencies else None,
            "p95_s": latencies[max(0, round(0.95 * len(latencies)) - 1)] if latencies else None,
            **summarise(chunk),
        })
    return windows


def _p(values: list[float], q: float) -> float | None:
    ordered = sorted(values)
    return ordered[max(0, round(q * len(ordered)) - 1)] if ordered else None


async def fair(url: str, minutes: float) -> dict[str, Any]:
    """Visitor A at its full allowance (every 3 s) beside visitor B (every 60 s)."""
    start = time.monotonic()
    a: list[dict[str, Any]] = []
    b: list[dict[str, Any]] = []

    async def one(client: httpx.AsyncClient, into: list[dict[str, Any]], question: str,
                  visitor: str) -> None:
        into.append(await ask(client, url, question, {"x-forwarded-for": visitor}))

    async with httpx.AsyncClient(timeout=600) as client:
        calls = []
        n = 0
        while time.monotonic() - start < minutes * 60:
            if n % 20 == 0:
                calls.append(asyncio.ensure_future(
                    one(client, b, QUESTIONS[(n // 20) % 2 * 3], "198.51.100.20")))
            calls.append(asyncio.ensure_future(
                one(client, a, QUESTIONS[n % len(QUESTIONS)], "198.51.100.10")))
            n += 1
            await asyncio.sleep(max(0.0, start + n * 3.0 - time.monotonic()))
        await asyncio.gather(*calls)
    waits = [r["wait_s"] for r in b if r.get("wait_s") is not None]
    latencies = [r["latency_s"] for r in b if "latency_s" in r]
    return {
        "minutes": minutes,
        "bursting_visitor": {"asked": len(a), **summarise(a),
                             "refused_by_code": {c: sum(r.get("code") == c for r in a)
                                                 for c in sorted({str(r.get("code")) for r in a
                                                                  if r["status"] == 429})}},
        "one_a_minute_visitor": {"asked": len(b), **summarise(b),
                                 "wait_p50_s": _p(waits, 0.5), "wait_p95_s": _p(waits, 0.95),
                                 "latency_p50_s": _p(latencies, 0.5),
                                 "latency_p95_s": _p(latencies, 0.95), "waits_s": waits},
    }


async def sample_rss(serve: Serve, every_s: float, into: list[dict[str, Any]],
                     stop: asyncio.Event) -> None:
    start = time.monotonic()
    while not stop.is_set():
        llama = serve.llama_pids
        into.append({"t_min": round((time.monotonic() - start) / 60, 2),
                     "serve_kib": rss_kib(serve.proc.pid),
                     "llama_kib": rss_kib(llama[0]) if llama else None,
                     "load1": round(os.getloadavg()[0], 2)})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)


async def kill_mid_answer(serve: Serve) -> dict[str, Any]:
    """SIGKILL llama-server at the first token of an answer; how that answer ends, and how
    long until a question completes again (one every 5 s)."""
    [pid] = serve.llama_pids
    terminals: list[dict[str, Any]] = []
    killed = time.monotonic()
    async with httpx.AsyncClient(timeout=600) as client:
        async with client.stream("POST", serve.gateway + "/api/ask",
                                 json={"question": QUESTIONS[3]}) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    if "delta" in event and pid in serve.llama_pids:
                        os.kill(pid, signal.SIGKILL)
                        killed = time.monotonic()
                    if "done" in event or "error" in event:
                        terminals.append(event)
        while (await client.get(serve.gateway + "/healthz")).status_code != 200:
            await asyncio.sleep(0.25)
        healthy = time.monotonic()
        tries = 0
        while True:
            tries += 1
            asked = time.monotonic()
            again = await ask(client, serve.gateway, QUESTIONS[0])
            if any("done" in t for t in again.get("terminals", [])):
                break
            await asyncio.sleep(5)
    return {"killed_stream_terminals": terminals,
            "seconds_until_healthz_ok": round(healthy - killed, 1),
            "seconds_until_a_question_completed": round(time.monotonic() - killed, 1),
            "of_which_answering_it": round(time.monotonic() - asked, 1),
            "questions_asked": tries}


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    site = built_site(args.site)
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count()}
    report["model_preset"] = args.model_preset
    stages = set(args.stages.split(","))
    with Serve(site, "--trusted-proxy", "127.0.0.1/32", "--model-preset",
               args.model_preset) as serve:
        serve.wait_started()
        if "burst" in stages:
            print("stack up; burst of 20 from one visitor", file=sys.stderr, flush=True)
            report["burst_one_visitor"] = await burst(serve.gateway, 20, distinct=False)
            print(report["burst_one_visitor"], file=sys.stderr, flush=True)
            await asyncio.sleep(60)
            async with httpx.AsyncClient(timeout=600) as client:
                later = await ask(client, serve.gateway, QUESTIONS[1])
            report["a_minute_later"] = {"status": later["status"],
                                        "terminals": later.get("terminals")}
            print(report["a_minute_later"], file=sys.stderr, flush=True)
        if "crowd" in stages:
            report["crowd_50_visitors"] = await burst(serve.gateway, 50, distinct=True)
            print(report["crowd_50_visitors"], file=sys.stderr, flush=True)
        if "fair" in stages:
            report["fairness"] = await fair(serve.gateway, args.fair_minutes)
            print(report["fairness"], file=sys.stderr, flush=True)
        if "kill" in stages:
            report["kill_mid_answer"] = await kill_mid_answer(serve)
            print(report["kill_mid_answer"], file=sys.stderr, flush=True)
        if "soak" in stages and args.soak_minutes > 0:
            await asyncio.sleep(60)  # the per-visitor window of the bursts passes
            rss: list[dict[str, Any]] = []
            stop = asyncio.Event()
            sampler = asyncio.ensure_future(sample_rss(serve, 60, rss, stop))
            report["soak"] = await soak(serve.gateway, args.soak_minutes, args.every,
                                        args.window_minutes)
            stop.set()
            await sampler
            report["rss"] = rss
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", help="built example site (default: build one)")
    parser.add_argument("--soak-minutes", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=5.0, help="seconds between soak questions")
    parser.add_argument("--window-minutes", type=float, default=5.0)
    parser.add_argument("--model-preset", default="smollm2-135m",
                        help="the model serve runs (default the smallest, so that one CPU "
                             "thread keeps up with a question every 5 s)")
    parser.add_argument("--fair-minutes", type=float, default=10.0)
    parser.add_argument("--stages", default="burst,crowd,fair,kill,soak",
                        help="comma-separated: burst, crowd, fair, kill, soak")
    parser.add_argument("--out", type=Path, help="write the report as JSON here too")
    args = parser.parse_args()
    report = asyncio.run(main_async(args))
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
