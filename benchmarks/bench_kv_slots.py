"""KV-cache slots, the seeds' method, against a real llama-server and the example site.

Ten scenarios (example-site questions). Before each, every slot in use is filled with an
unrelated prompt; then the scenario's routing request (source catalog as a stable system
prefix, JSON schema with a ``source_ids`` enum) and answer request (the gateway's stable
system prompt plus evidence) run three times. Cold = first run; warm = median of the other
two; TTFT and total per phase, medians over scenarios.

Configurations: one slot shared by routing and answers with the host prompt cache off
(``--cache-ram 0``) and on, and three dedicated slots (routing 0, answers 1) with it off and
on. Then the cached share of the prompt per turn over a seven-turn conversation through the
real gateway.

    .venv/bin/python -m benchmarks.bench_kv_slots [--scenarios 10] [--threads 2] [--json out.json]

Absolute times are machine-bound; the cold/warm ratios are the result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks._llama import LOG, Timed, built_site, chat, median
from benchmarks.harness import ThreadedServer, ask, metrics, start_llama
from site_knowledge.gateway import prompt
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig
from site_knowledge.retrieval import KnowledgeIndex, load_index

QUESTIONS = [
    "What is slotmeter?",
    "Where did Teo work in 2020?",
    "Why did he move from Berlin to Zurich?",
    "What did the backpressure talk say?",
    "Which projects has Teo built?",
    "Where has Teo lived?",
    "What is tidewater?",
    "Why did he take a sabbatical in Lisbon?",
    "What is Teo's current job?",
    "How can I contact Teo?",
]
CONVERSATION = [
    "Where did Teo work in 2020?",
    "What did he build there?",
    "Where did he live then?",
    "Why did he move?",
    "What is slotmeter?",
    "What did it measure?",
    "Which other projects has he built?",
]
UNRELATED = ("Describe the water cycle in detail: evaporation from oceans and lakes, "
             "condensation into clouds, precipitation as rain, snow or hail, infiltration into "
             "soil and groundwater, runoff into rivers, and transpiration by plants. ") * 6


def routing_system(index: KnowledgeIndex) -> str:
    lines = [
        "You route a visitor's question about this website to the sources that hold the answer.",
        "Reply with JSON only: {\"source_ids\": [ids], \"intent\": \"answer\" or \"refuse\"}.",
        "Choose at most three ids from the catalog; choose none and refuse when nothing fits.",
        "Employer, dates and places questions select the career and residence sources.",
        "",
        "Catalog (id: title. description):",
    ]
    for source in index.artifact["sources"]:
        lines.append(f"- {source['id']}: {source['title']}. {source['description']}")
    return "\n".join(lines)


def routing_payload(index: KnowledgeIndex, question: str, slot: int) -> dict[str, Any]:
    ids = [s["id"] for s in index.artifact["sources"]]
    schema = {
        "type": "object",
        "properties": {
            "source_ids": {"type": "array", "items": {"enum": ids}, "maxItems": 3},
            "intent": {"enum": ["answer", "refuse"]},
        },
        "required": ["source_ids", "intent"],
    }
    return {
        "id_slot": slot, "cache_prompt": True, "temperature": 0, "max_tokens": 64,
        "chat_template_kwargs": {"enable_thinking": False},
        "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
        "messages": [{"role": "system", "content": routing_system(index)},
                     {"role": "user", "content": question}],
    }


def answer_payload(index: KnowledgeIndex, question: str, slot: int,
                   answer_tokens: int) -> dict[str, Any]:
    result = index.search(question)
    evidence = prompt.evidence_from_hits(result.hits)
    _, evidence = prompt.by_characters([], evidence, prompt.Budgets())
    messages = prompt.messages(index.artifact["prompt"]["system"], [], evidence, question)
    return prompt.answer_payload(messages, slot=slot, max_tokens=answer_tokens)


def tokens(client: httpx.Client, url: str, payload: dict[str, Any]) -> int:
    response = client.post(url + "/v1/chat/completions/input_tokens",
                           json={"messages": payload["messages"]})
    count: int = response.json()["input_tokens"]
    return count


def run_config(index: KnowledgeIndex, name: str, slots: int, cache_ram: int, threads: int,
               scenarios: int, answer_tokens: int) -> dict[str, Any]:
    server = start_llama(LOG, slots=slots, cache_ram_mib=cache_ram, threads=threads)
    route_slot, answer_slot = (0, 1) if slots > 1 else (0, 0)
    phases: dict[str, dict[str, list[float]]] = {
        p: {"cold_ttft": [], "warm_ttft": [], "cold_total": [], "warm_total": []}
        for p in ("routing", "answer")
    }
    prefix: dict[str, int] = {}
    try:
        with httpx.Client(timeout=600, limits=httpx.Limits(max_keepalive_connections=0)) as client:
            url = server.spec.url
            for question in QUESTIONS[:scenarios]:
                for slot in sorted({route_slot, answer_slot}):
                    chat(client, url, {"id_slot": slot, "cache_prompt": True, "max_tokens": 1,
                                       "messages": [{"role": "user", "content": UNRELATED}]})
                requests = {"routing": routing_payload(index, question, route_slot),
                            "answer": answer_payload(index, question, answer_slot, answer_tokens)}
                if not prefix:
                    prefix = {p: tokens(client, url, r) for p, r in requests.items()}
                runs: dict[str, list[Timed]] = {"routing": [], "answer": []}
                for _ in range(3):
                    for phase, payload in requests.items():
                        runs[phase].append(chat(client, url, payload))
                for phase, timed in runs.items():
                    cold, warm = timed[0], timed[1:]
                    phases[phase]["cold_ttft"].append(cold.ttft_s or cold.total_s)
                    phases[phase]["cold_total"].append(cold.total_s)
                    phases[phase]["warm_ttft"].append(median([t.ttft_s or t.total_s for t in warm]))
                    phases[phase]["warm_total"].append(median([t.total_s for t in warm]))
                print(f"  {name}: {question!r} routing cold {runs['routing'][0].ttft_s:.2f}s "
                      f"warm {runs['routing'][1].ttft_s:.2f}s; answer cold "
                      f"{runs['answer'][0].ttft_s or 0:.2f}s warm {runs['answer'][1].ttft_s or 0:.2f}s",
                      file=sys.stderr, flush=True)
    finally:
        server.stop()
    summary: dict[str, Any] = {"config": name, "slots": slots, "cache_ram_mib": cache_ram,
                               "prompt_tokens": prefix}
    for phase, values in phases.items():
        row = {k: round(median(v), 3) for k, v in values.items()}
        row["warm_ttft_share_of_cold"] = round(row["warm_ttft"] / row["cold_ttft"], 4)
        summary[phase] = row
    return summary


def conversation(site: Path, threads: int, cache_reuse: int) -> list[dict[str, Any]]:
    """Seven turns through the real gateway; the cached share of each turn's prompt."""
    index = load_index(site)
    server = start_llama(LOG, slots=3, cache_ram_mib=1024, threads=threads, cache_reuse=cache_reuse)
    rows = []
    try:
        # Private mode: the per-request samples read here are shown only with the token.
        config = GatewayConfig(upstreams=(server.spec.url,), token="bench")
        with ThreadedServer(create_app(index, config)) as gateway:
            history: list[dict[str, str]] = []
            for turn, question in enumerate(CONVERSATION, start=1):
                stream = ask(gateway.url, question, history=history[-4:],
                             headers={"authorization": "Bearer bench"})
                sample = metrics(gateway.url, token="bench")["samples"][-1]
                cached = sample.get("cached_tokens", 0)
                total = sample.get("prompt_tokens") or 0
                rows.append({"turn": turn, "history_exchanges": len(history[-4:]),
                             "prompt_tokens": total, "cached_tokens": cached,
                             "cached_share": round(cached / total, 3) if total else None,
                             "outcome": sample["outcome"]})
                print(f"  turn {turn}: {rows[-1]}", file=sys.stderr, flush=True)
                if stream.terminal and stream.terminal.get("finish_reason") in ("stop", "length"):
                    history.append({"question": question, "answer": stream.text})
    finally:
        server.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", help="built example site (default: build one)")
    parser.add_argument("--scenarios", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--answer-tokens", type=int, default=64)
    parser.add_argument("--configs", default="one-off,one-on,three-off,three-on")
    parser.add_argument("--skip-conversation", action="store_true")
    parser.add_argument("--cache-reuse", default="0,256",
                        help="--cache-reuse values for the conversation (comma-separated)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    site = built_site(args.site)
    index = load_index(site)
    configs = {"one-off": (1, 0), "one-on": (1, 1024), "three-off": (3, 0), "three-on": (3, 1024)}
    started = time.time()
    names = [n for n in args.configs.split(",") if n and n != "none"]
    results = [run_config(index, name, *configs[name], args.threads, args.scenarios,
                          args.answer_tokens) for name in names]
    report: dict[str, Any] = {"model": "SmolLM2-135M-Instruct Q4_1", "threads": args.threads,
                              "scenarios": args.scenarios, "answer_tokens": args.answer_tokens,
                              "configs": results}
    if not args.skip_conversation:
        report["conversation"] = {
            f"cache_reuse_{n}": conversation(site, args.threads, n)
            for n in (int(v) for v in args.cache_reuse.split(","))
        }
    report["seconds"] = round(time.time() - started)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
