"""Speculative decoding for the answers: llama-server with a speculative mode against the same
server without it, on the gateway's own prompts, in the same run, alternating.

Two llama-servers run the same preset side by side (one with ``--spec ARG`` arguments, one
without); only one works at a time. For each answerable question of an answer set or battery
(no history), the gateway's prompt is assembled (hybrid retrieval, the artifact's system
prompt, the evidence fitted to the slot) and each server answers it on the answer slot with
the gateway's own request body and answer budget, the slot first put back to the system
prompt alone (as a running gateway keeps it). The order of the two alternates by question.
Reported: time to the first token and to the whole answer (p50/p95 and the ratio of the
medians), decoding tokens per second, the drafts llama-server accepted, and how many answers
came out identical (greedy decoding verifies every drafted token, so the text should not
change; a difference is the batch's arithmetic, and is counted).

    .venv/bin/python -m benchmarks.bench_speculative --site /tmp/sk/netbox \\
        --questions evals/netbox/answers.jsonl --questions-max 20 \\
        --spec=--spec-type --spec=ngram-simple
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import httpx

from benchmarks._llama import Timed, chat
from benchmarks.bench_ttft import gateway_prompt, start, summary, wait_idle
from site_knowledge.evals.dataset import load_battery
from site_knowledge.gateway import prompt
from site_knowledge.gateway.metrics import percentile
from site_knowledge.llama.presets import DEFAULT_PRESET
from site_knowledge.llama.supervisor import LlamaServer
from site_knowledge.retrieval import load_index

ANSWER_SLOT = 1
"""The gateway's answer slot (``GatewayConfig.answer_slot``)."""


def answer(client: httpx.Client, server: LlamaServer, system: list[dict[str, str]],
           messages: list[dict[str, str]], max_tokens: int) -> Timed:
    """One answer from ``server``, its answer slot first holding the system prompt alone."""
    wait_idle(client, server.spec.url)
    chat(client, server.spec.url, prompt.answer_payload(system, slot=ANSWER_SLOT, max_tokens=1))
    return chat(client, server.spec.url,
                prompt.answer_payload(messages, slot=ANSWER_SLOT, max_tokens=max_tokens))


def row(timed: Timed) -> dict[str, Any]:
    """What one answer measured."""
    t = timed.timings
    return {"ttft_s": timed.ttft_s, "total_s": timed.total_s,
            "predicted": t.get("predicted_n"), "decode_tokens_per_s": t.get("predicted_per_second"),
            "drafted": t.get("draft_n"), "accepted": t.get("draft_n_accepted")}


def side(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """p50/p95 of one server's answers: first token and total in ms, decoding rate, drafts."""
    measured = [r[key] for r in rows]
    drafted = sum(m["drafted"] or 0 for m in measured)
    return {
        "ttft_ms": summary([m["ttft_s"] * 1000 for m in measured if m["ttft_s"] is not None]),
        "total_ms": summary([m["total_s"] * 1000 for m in measured]),
        "decode_tokens_per_s": summary([m["decode_tokens_per_s"] for m in measured
                                        if m["decode_tokens_per_s"]]),
        "tokens": summary([float(m["predicted"] or 0) for m in measured]),
        "drafted": drafted,
        "accepted_share": round(sum(m["accepted"] or 0 for m in measured) / drafted, 3)
        if drafted else None,
    }


def ratio(rows: list[dict[str, Any]], measure: str) -> float | None:
    """The speculative server's median over the plain one's."""
    plain = [r["plain"][measure] for r in rows if r["plain"][measure] is not None]
    spec = [r["spec"][measure] for r in rows if r["spec"][measure] is not None]
    if not plain or not spec:
        return None
    return round(percentile(spec, 0.5) / percentile(plain, 0.5), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--site", type=Path, required=True, help="a site built with the plugin")
    parser.add_argument("--questions", required=True, help="battery version or answer-set file")
    parser.add_argument("--questions-max", type=int, default=20)
    parser.add_argument("--preset", default=DEFAULT_PRESET)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--spec", action="append", required=True,
                        help="a llama-server argument of the speculative server, e.g. "
                             "--spec=--spec-type --spec=ngram-simple")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    index = load_index(args.site)
    budget = prompt.Budgets.from_artifact(index.artifact).answer_tokens
    items = [i for i in load_battery(args.questions).items
             if not i.must_refuse and not i.history][:args.questions_max]
    plain = start(args.preset, args.threads, ())
    rows: list[dict[str, Any]] = []
    try:
        spec = start(args.preset, args.threads, tuple(args.spec))
        try:
            system = [{"role": "system", "content": index.artifact["prompt"]["system"]}]
            with httpx.Client(timeout=600) as client:
                for n, item in enumerate(items):
                    if not index.search(item.question).answerable:
                        continue
                    messages = asyncio.run(gateway_prompt(index, plain.spec.url, item.question))
                    order = [("plain", plain), ("spec", spec)][::1 if n % 2 == 0 else -1]
                    timed = {name: answer(client, server, system, messages, budget)
                             for name, server in order}
                    rows.append({"id": item.id, "same_text": timed["plain"].text == timed["spec"].text,
                                 **{name: row(t) for name, t in timed.items()}})
                    print(json.dumps(rows[-1]), flush=True)
        finally:
            spec.stop()
    finally:
        plain.stop()
    report = {
        "site": str(args.site), "questions": args.questions, "preset": args.preset,
        "threads": args.threads, "spec_args": args.spec, "answers": len(rows),
        "same_text": sum(r["same_text"] for r in rows),
        "plain": side(rows, "plain"), "spec": side(rows, "spec"),
        "spec_over_plain_p50": {m: ratio(rows, m) for m in ("ttft_s", "total_s")},
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps({**report, "rows": rows}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
