"""llama-server with some arguments against the same server without them, on the gateway's
own prompts, in the same run, alternating: what a llama-server setting does to the first token,
the whole answer and its text.

Two llama-servers run the same preset side by side (the variant with ``--variant ARG``
arguments, both with the weight repacking ``--repack`` names); only one works at a time. For
each answerable question of an answer set or battery (no history), the gateway's prompt is
assembled (hybrid retrieval, the artifact's system prompt, the evidence fitted to the slot)
and each server answers it on the answer slot with the gateway's own request body and answer
budget, the slot first put back to the system prompt alone (as a running gateway keeps it).
The order of the two alternates by question. Reported: time to the first token and to the
whole answer (p50/p95 and the ratio of the medians), decoding tokens per second, drafted and
accepted tokens for a speculative mode, and how many answers came out identical (greedy
decoding: a difference is the arithmetic of another kernel or batch, and is counted).

    .venv/bin/python -m benchmarks.bench_llama_args --site /tmp/sk/netbox \\
        --questions evals/netbox/answers.jsonl --questions-max 12 --repack on \\
        --variant=--no-repack
    ... --repack off --variant=--spec-type --variant=ngram-simple
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

import httpx

from benchmarks._llama import Timed, chat
from benchmarks.bench_ttft import (
    ANSWER_SLOT,
    add_arguments,
    gateway_prompt,
    questions,
    start,
    summary,
    system_only,
)
from site_knowledge.gateway import prompt
from site_knowledge.gateway.metrics import percentile
from site_knowledge.llama.cpu import repack_choice
from site_knowledge.llama.supervisor import LlamaServer
from site_knowledge.retrieval import load_index


def answer(client: httpx.Client, server: LlamaServer, system: list[dict[str, str]],
           messages: list[dict[str, str]], max_tokens: int) -> Timed:
    """One answer from ``server``, its answer slot first holding the system prompt alone."""
    system_only(client, server.spec.url, system)
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
    """The variant's median over the plain server's."""
    plain = [r["plain"][measure] for r in rows if r["plain"][measure] is not None]
    variant = [r["variant"][measure] for r in rows if r["variant"][measure] is not None]
    if not plain or not variant:
        return None
    return round(percentile(variant, 0.5) / percentile(plain, 0.5), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    add_arguments(parser)
    parser.add_argument("--variant", action="append", required=True,
                        help="a llama-server argument of the variant, e.g. --variant=--no-repack")
    args = parser.parse_args()
    index = load_index(args.site)
    budget = prompt.Budgets.from_artifact(index.artifact).answer_tokens
    items = questions(args)
    repack = repack_choice(args.repack)
    plain = start(args.preset, args.threads, (), repack)
    rows: list[dict[str, Any]] = []
    try:
        variant = start(args.preset, args.threads, tuple(args.variant), repack)
        try:
            system = [{"role": "system", "content": index.artifact["prompt"]["system"]}]
            with httpx.Client(timeout=600,
                              limits=httpx.Limits(max_keepalive_connections=0)) as client:
                for n, item in enumerate(items):
                    if not index.search(item.question).answerable:
                        continue
                    messages = asyncio.run(gateway_prompt(index, plain.spec.url, item.question))
                    order = [("plain", plain), ("variant", variant)][::1 if n % 2 == 0 else -1]
                    timed = {name: answer(client, server, system, messages, budget)
                             for name, server in order}
                    same = timed["plain"].text == timed["variant"].text
                    rows.append({"id": item.id, "same_text": same,
                                 **{name: row(t) for name, t in timed.items()},
                                 **({} if same else {"texts": {name: t.text
                                                               for name, t in timed.items()}})})
                    print(json.dumps(rows[-1]), flush=True)
        finally:
            variant.stop()
    finally:
        plain.stop()
    report = {
        "site": str(args.site), "questions": args.questions, "preset": args.preset,
        "threads": args.threads, "repack": args.repack, "variant_args": args.variant,
        "answers": len(rows), "same_text": sum(r["same_text"] for r in rows),
        "plain": side(rows, "plain"), "variant": side(rows, "variant"),
        "variant_over_plain_p50": {m: ratio(rows, m) for m in ("ttft_s", "total_s")},
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps({**report, "rows": rows}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
