"""Gateway overhead: time to first token through the gateway against llama-server direct,
the same prompt, in the same run, alternating.

Both paths send the identical messages to slot 1 (so both are served from a warm prompt
cache) and stop reading at the first token; the script waits for the slot to go idle between
requests. The gateway's share is split into retrieval (query embedding, hybrid ranking, gate),
the token count request (skipped once a learned bound shows the prompt clearly fits), and
the rest (policy, admission, SSE translation). The gateway runs in this process, in a
thread, so it shares the interpreter with the measuring client.

    .venv/bin/python -m benchmarks.bench_gateway_overhead [--rounds 20] [--threads 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

import httpx

from benchmarks._llama import LOG, built_site
from benchmarks.harness import ThreadedServer, start_llama
from site_knowledge.gateway import prompt
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.gateway.upstream import Upstream
from site_knowledge.retrieval import load_index

QUESTION = "What is slotmeter?"


def wait_idle(client: httpx.Client, url: str) -> None:
    while any(s["is_processing"] for s in client.get(url + "/slots").json()):
        time.sleep(0.01)


def first_token_direct(client: httpx.Client, url: str, payload: dict[str, Any]) -> float:
    started = time.perf_counter()
    with client.stream("POST", url + "/v1/chat/completions",
                       json={**payload, "stream": True}) as response:
        for line in response.iter_lines():
            if line.startswith("data: {") and '"content":"' in line:
                return time.perf_counter() - started
    raise RuntimeError("no token")


def first_token_gateway(client: httpx.Client, url: str) -> float:
    started = time.perf_counter()
    with client.stream("POST", url + "/api/ask", json={"question": QUESTION}) as response:
        for line in response.iter_lines():
            if line.startswith('data: {"delta"'):
                return time.perf_counter() - started
    raise RuntimeError("no token")


def p50(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    index = load_index(built_site(args.site))
    index.encoder  # noqa: B018
    server = start_llama(LOG, slots=3, cache_ram_mib=1024, threads=args.threads)
    try:
        limits = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)
        upstream = Upstream((server.spec.url,), limits)

        async def build() -> list[dict[str, str]]:
            result = index.search(QUESTION)
            messages, _, _ = await prompt.assemble(
                index.artifact["prompt"]["system"], [], prompt.evidence_from_hits(result.hits),
                QUESTION, prompt.Budgets.from_artifact(index.artifact), upstream.count_tokens)
            await upstream.aclose()
            return messages

        messages = asyncio.run(build())
        payload = prompt.answer_payload(messages, slot=1, max_tokens=256)
        config = GatewayConfig(upstreams=(server.spec.url,), limits=limits)
        direct, through, retrieval, counting = [], [], [], []
        app = create_app(index, config)
        with ThreadedServer(app) as gateway, \
                httpx.Client(timeout=120) as client:
            for warm in range(3):
                first_token_gateway(client, gateway.url)
                wait_idle(client, server.spec.url)
                del warm
            for _ in range(args.rounds):
                direct.append(first_token_direct(client, server.spec.url, payload))
                wait_idle(client, server.spec.url)
                through.append(first_token_gateway(client, gateway.url))
                wait_idle(client, server.spec.url)
                started = time.perf_counter()
                index.search(QUESTION)
                retrieval.append(time.perf_counter() - started)
                started = time.perf_counter()
                client.post(server.spec.url + "/v1/chat/completions/input_tokens",
                            json={"messages": messages})
                counting.append(time.perf_counter() - started)
    finally:
        server.stop()
    paired = [g - d for g, d in zip(through, direct, strict=True)]
    counter = app.state.gateway.counter
    report = {
        "rounds": args.rounds, "threads": args.threads,
        "ttft_direct_p50_ms": p50(direct),
        "ttft_gateway_p50_ms": p50(through),
        "overhead_p50_ms": p50(paired),
        "retrieval_p50_ms": p50(retrieval),
        "token_count_p50_ms": p50(counting),
        "exact_counts_skipped": f"{counter.skipped} of {args.rounds + 3}",
        "overhead_without_retrieval_p50_ms": round(p50(paired) - p50(retrieval), 2),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
