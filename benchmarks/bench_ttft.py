"""Time to the first answer token on distinct questions: the gateway against llama-server
alone, on the same prompts, in the same run, alternating.

For each answerable question of a battery or answer set (no history), the gateway's own
prompt is assembled (hybrid retrieval, the artifact's system prompt, the evidence fitted to
the slot) and sent straight to llama-server on the answer slot; then the same question goes
through the gateway (``POST /api/ask``), which retrieves, assembles and sends the same prompt.
Both read the system prompt from the slot's cache, as a running gateway keeps it (the slot is
put back to the system prompt alone before each request), so what they prefill is the
evidence and the question: the first token's cost on a real site.

    .venv/bin/python -m benchmarks.bench_ttft --site /tmp/sk/netbox \
        --questions evals/netbox/answers.jsonl --questions-max 20 [--preset qwen2.5-coder-1.5b]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks._llama import LOG, chat
from benchmarks.harness import ThreadedServer, start_llama
from site_knowledge.evals.dataset import Item, load_battery
from site_knowledge.gateway import prompt
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.gateway.metrics import percentile
from site_knowledge.gateway.upstream import Upstream
from site_knowledge.llama.cpu import REPACK_CHOICES, repack_choice
from site_knowledge.llama.presets import DEFAULT_PRESET, preset, preset_path
from site_knowledge.llama.supervisor import LlamaServer, cache_dir
from site_knowledge.retrieval import KnowledgeIndex, load_index

ANSWER_SLOT = GatewayConfig.answer_slot
"""The gateway's answer slot, the one its prompts are cached in."""
GENEROUS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)


def start(preset_name: str, threads: int, extra: tuple[str, ...],
          repack: bool | None = None) -> LlamaServer:
    """llama-server on the preset's model as ``site-knowledge serve`` runs it (3 slots, the
    host prompt cache on, weight repacking as ``serve --repack`` says: ``None`` for auto)."""
    chosen = preset(preset_name)
    model = preset_path(chosen, cache_dir() / "models")
    if not model.is_file():
        raise SystemExit(f"{model} is missing: run `site-knowledge model fetch {preset_name}`")
    return start_llama(LOG, slots=3, threads=threads, cache_ram_mib=1024, extra=extra,
                       model=model, model_sha256=chosen.sha256, repack=repack)



async def gateway_prompt(index: KnowledgeIndex, url: str, question: str
                         ) -> list[dict[str, str]]:
    """The messages the gateway sends for a question without history."""
    upstream = Upstream((url,), GENEROUS)
    try:
        result = index.search(question)
        messages, _, _ = await prompt.assemble(
            index.artifact["prompt"]["system"], [], prompt.evidence_from_hits(result.hits[:4]),
            question, prompt.Budgets.from_artifact(index.artifact), upstream.count_tokens)
    finally:
        await upstream.aclose()
    return messages


def first_delta(client: httpx.Client, url: str, question: str) -> float | None:
    """Seconds to the gateway's first ``delta`` event; None for a refusal before any model."""
    started = time.perf_counter()
    with client.stream("POST", url + "/api/ask", json={"question": question}) as response:
        for line in response.iter_lines():
            if line.startswith('data: {"sources": []'):
                return None
            if line.startswith('data: {"delta"'):
                return time.perf_counter() - started
    raise RuntimeError("the stream ended without a token")


def wait_idle(client: httpx.Client, url: str) -> None:
    while any(s["is_processing"] for s in client.get(url + "/slots").json()):
        time.sleep(0.05)


def system_only(client: httpx.Client, url: str, system: list[dict[str, str]]) -> None:
    """The answer slot back to the system prompt alone, as between visitors."""
    wait_idle(client, url)
    chat(client, url, prompt.answer_payload(system, slot=ANSWER_SLOT, max_tokens=1))


def summary(values: list[float]) -> dict[str, float | None]:
    return {"p50": percentile(values, 0.5), "p95": percentile(values, 0.95)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The site, its questions, the preset and how llama-server runs it, and ``--out``."""
    parser.add_argument("--site", type=Path, required=True, help="a site built with the plugin")
    parser.add_argument("--questions", required=True, help="battery version or answer-set file")
    parser.add_argument("--questions-max", type=int, default=20)
    parser.add_argument("--preset", default=DEFAULT_PRESET)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repack", choices=REPACK_CHOICES, default="auto",
                        help="llama-server's weight repacking, as `serve --repack` (default auto)")
    parser.add_argument("--out", type=Path, help="also write the JSON here")


def questions(args: argparse.Namespace) -> list[Item]:
    """The first ``--questions-max`` questions without history that may be answered."""
    return [i for i in load_battery(args.questions).items
            if not i.must_refuse and not i.history][:args.questions_max]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    add_arguments(parser)
    parser.add_argument("--llama-arg", action="append", default=[],
                        help="an extra llama-server argument, e.g. --llama-arg=-fa --llama-arg=on")
    args = parser.parse_args()
    index = load_index(args.site)
    items = questions(args)
    server = start(args.preset, args.threads, tuple(args.llama_arg),
                   repack_choice(args.repack))
    rows: list[dict[str, Any]] = []
    try:
        system = [{"role": "system", "content": index.artifact["prompt"]["system"]}]
        config = GatewayConfig(upstreams=(server.spec.url,), limits=GENEROUS)
        with ThreadedServer(create_app(index, config)) as gateway, \
                httpx.Client(timeout=300, limits=httpx.Limits(max_keepalive_connections=0)) as client:
            for item in items:
                messages = asyncio.run(gateway_prompt(index, server.spec.url, item.question))
                system_only(client, server.spec.url, system)
                direct = chat(client, server.spec.url,
                              prompt.answer_payload(messages, slot=ANSWER_SLOT, max_tokens=8))
                system_only(client, server.spec.url, system)
                through = first_delta(client, gateway.url, item.question)
                if through is None:
                    continue
                rows.append({"id": item.id, "direct_s": direct.ttft_s, "gateway_s": through,
                             "prompt_tokens": direct.timings.get("prompt_n"),
                             "cached_tokens": direct.timings.get("cache_n"),
                             "prompt_tokens_per_s": direct.timings.get("prompt_per_second")})
                print(json.dumps(rows[-1]), flush=True)
    finally:
        server.stop()
    direct_s = [r["direct_s"] * 1000 for r in rows if r["direct_s"] is not None]
    gateway_s = [r["gateway_s"] * 1000 for r in rows]
    report = {
        "site": str(args.site), "questions": args.questions, "preset": args.preset,
        "threads": args.threads, "repack": args.repack, "llama_args": args.llama_arg,
        "answered_by_a_model": len(rows),
        "ttft_direct_ms": summary(direct_s), "ttft_gateway_ms": summary(gateway_s),
        "gateway_over_direct_p50": round(percentile(gateway_s, 0.5) / percentile(direct_s, 0.5), 2)
        if direct_s and gateway_s else None,
        "prompt_tokens_read": summary([float(r["prompt_tokens"]) for r in rows
                                       if r["prompt_tokens"] is not None]),
        "prompt_tokens_per_s": summary([float(r["prompt_tokens_per_s"]) for r in rows
                                        if r["prompt_tokens_per_s"] is not None]),
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps({**report, "rows": rows}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
