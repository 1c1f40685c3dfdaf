"""Routing eval: what the router on slot 0 changes before any answer is generated.

Every question of a set goes through the gateway's own steps up to the answer call: the
injection check, hybrid retrieval and the gate, then (side by side, in one run) the evidence
the answer call would receive without routing (the hybrid order) and with it (the routing
call against a real llama-server, validated, and the evidence it selects), both fitted to the
slot by the gateway's prompt assembly. No answer is generated, so a set costs one routing
call per question that passes the gate.

    python -m evals.routing_eval --sites /tmp/sk --llama http://127.0.0.1:18900 \\
        --model-name qwen2.5-coder-0.5b [--only netbox] [--limit 10]

Per set and both ways: refusal of off-topic, word-salad and injection questions (end to end:
injection check, gate, router), answerable questions still answered, page-level recall of
the evidence (a hit only when the question is answered), and the routing call's latency,
time to first token and cached share of its prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.retrieval_sets import SETS, EvalSet
from site_knowledge.evals import report
from site_knowledge.evals.dataset import RetrievalQuestion, load_items, load_questions
from site_knowledge.evals.retrieval_eval import percentile
from site_knowledge.gateway.answer import assemble_prompt, route_evidence
from site_knowledge.gateway.app import create_app, without_injected_turns
from site_knowledge.gateway.config import GatewayConfig, Limits, Routing
from site_knowledge.gateway.policy import AskRequest, Exchange
from site_knowledge.gateway.state import Gateway
from site_knowledge.grounding import is_injection

if TYPE_CHECKING:
    from site_knowledge.retrieval import Hit, KnowledgeIndex

REFUSE_KINDS = ("out_of_scope", "off_topic", "gibberish", "injection")


@dataclass
class Outcome:
    """One question, both ways."""

    id: str
    kind: str
    in_scope: bool
    gated: bool
    expected: list[str]
    stopped_by: str | None = None
    """``injection`` or ``gate`` (before routing), ``router`` (the route refused)."""
    route: dict[str, Any] | None = None
    evidence: dict[str, list[str]] = field(default_factory=dict)
    timings: dict[str, float | int | None] = field(default_factory=dict)

    def refused(self, routed: bool) -> bool:
        return self.stopped_by in ("injection", "gate") or (routed and self.stopped_by == "router")

    def hit(self, routed: bool) -> bool:
        way = "routed" if routed else "hybrid"
        return not self.refused(routed) and bool(set(self.evidence.get(way, [])) & set(self.expected))


def _ask(question: RetrievalQuestion, answers: dict[str, tuple[Exchange, ...]]) -> AskRequest:
    history = answers.get(question.id) or tuple(Exchange(q, "") for q in question.history)
    return AskRequest(question.question, history)


def _pages(hits: Sequence[Hit], kept: int) -> list[str]:
    """The expected-page keys of the first ``kept`` hits: page path, else source id."""
    return [h.source.path or h.source.id for h in hits[:kept]]


async def _evidence_pages(gateway: Gateway, ask: AskRequest, hits: Sequence[Hit]) -> list[str]:
    built = await assemble_prompt(gateway, ask, hits)
    return _pages(hits, len(built.evidence))


async def measure(routed: Gateway, plain: Gateway, question: RetrievalQuestion,
                  answers: dict[str, tuple[Exchange, ...]]) -> Outcome:
    """One question through the gateway's steps, without and with routing."""
    ask = _ask(question, answers)
    outcome = Outcome(question.id, question.kind, question.in_scope, question.gated,
                      list(question.expected))
    if is_injection(ask.question):
        outcome.stopped_by = "injection"
        return outcome
    ask = without_injected_turns(ask)
    index: KnowledgeIndex = routed.index
    result = index.search(ask.question, [h.question for h in ask.history], "hybrid",
                          routed.search_depth)
    if not result.answerable:
        outcome.stopped_by = "gate"
        return outcome
    hybrid, _ = await route_evidence(plain, ask, result.hits)
    outcome.evidence["hybrid"] = await _evidence_pages(plain, ask, hybrid)
    chosen, decision = await route_evidence(routed, ask, result.hits)
    if decision is None:
        raise RuntimeError("the routed gateway has routing off")
    outcome.route = decision.public()
    outcome.timings = {"latency_ms": decision.latency_ms, "ttft_ms": decision.ttft_ms,
                       "prompt_tokens": decision.prompt_tokens,
                       "cached_tokens": decision.cached_tokens}
    if decision.refuses:
        outcome.stopped_by = "router"
    else:
        outcome.evidence["routed"] = await _evidence_pages(routed, ask, chosen)
    return outcome


def _share(part: int, whole: int) -> dict[str, Any]:
    return {"part": part, "whole": whole, "rate": round(part / whole, 4) if whole else None}


def summarise(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Both ways: refusal of the gated kinds, answered answerable, evidence recall, timings."""
    gated = [o for o in outcomes if o.gated]
    answerable = [o for o in outcomes if o.in_scope]
    ranked = [o for o in answerable if o.expected]
    private = [o for o in outcomes if not o.in_scope and not o.gated]
    ways: dict[str, Any] = {}
    for name, routed in (("hybrid", False), ("routed", True)):
        ways[name] = {
            "refused_gated": _share(sum(o.refused(routed) for o in gated), len(gated)),
            "answered": _share(sum(not o.refused(routed) for o in answerable), len(answerable)),
            "evidence_recall": _share(sum(o.hit(routed) for o in ranked), len(ranked)),
            "refused_private": _share(sum(o.refused(routed) for o in private), len(private)),
            "refused_by_kind": {
                kind: _share(sum(o.refused(routed) for o in outcomes if o.kind == kind),
                             sum(1 for o in outcomes if o.kind == kind))
                for kind in sorted({o.kind for o in outcomes})
            },
        }
    calls = [o for o in outcomes if o.route is not None]
    warm = calls[1:]
    latency = [float(o.timings["latency_ms"] or 0) for o in warm]
    ttft = [float(t) for o in warm if isinstance(t := o.timings.get("ttft_ms"), int | float)]
    prompt = sum(int(o.timings.get("prompt_tokens") or 0) for o in warm)
    cached = sum(int(o.timings.get("cached_tokens") or 0) for o in warm)
    return {
        "questions": len(outcomes),
        "ways": ways,
        "routing_calls": len(calls),
        "intents": dict(Counter(str(o.route["intent"]) for o in calls if o.route)),
        "fallbacks": dict(Counter(str(o.route["fallback"]) for o in calls
                                  if o.route and o.route.get("fallback"))),
        "warm_calls": {
            "latency_ms": {"p50": percentile(latency, 50), "p95": percentile(latency, 95)},
            "ttft_ms": {"p50": percentile(ttft, 50), "p95": percentile(ttft, 95)},
            "cached_share": round(cached / prompt, 4) if prompt else None,
        },
    }


def _battery_answers(path: Path) -> dict[str, tuple[Exchange, ...]]:
    """A battery item's earlier exchanges with their answers (a question set has none)."""
    return {item.id: item.history for item in load_items(path) if item.history}


async def run_set(eval_set: EvalSet, site_dir: Path, llama: str, settings: Routing,
                  limit: int | None) -> dict[str, Any]:
    """Every question of one set, both ways; its outcomes and summary."""
    from site_knowledge.retrieval import load_index

    index = load_index(site_dir)
    index.encoder  # noqa: B018 - loaded before the first timing
    limits = Limits(visitor_requests_per_minute=10**6, global_requests_per_minute=10**6)
    base = GatewayConfig(upstreams=(llama,), limits=limits)
    plain = create_app(index, base).state.gateway
    routed = create_app(index, GatewayConfig(upstreams=(llama,), limits=limits,
                                             routing=settings)).state.gateway
    questions = load_questions(eval_set.questions)[:limit]
    answers = _battery_answers(eval_set.questions) if "battery" in eval_set.name else {}
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    try:
        for n, question in enumerate(questions, 1):
            outcomes.append(await measure(routed, plain, question, answers))
            last = outcomes[-1]
            print(f"  {eval_set.name} {n}/{len(questions)} {question.id} {question.kind}: "
                  f"{last.stopped_by or 'answered'} {last.route or ''}", flush=True)
    finally:
        await routed.upstream.aclose()
        await plain.upstream.aclose()
    return {"set": eval_set.name, "questions_file": str(eval_set.questions.name),
            "wall_s": round(time.perf_counter() - started, 1),
            "summary": summarise(outcomes), "outcomes": [asdict(o) for o in outcomes]}


def _rate(share: dict[str, Any]) -> str:
    return (f"{100 * share['rate']:.1f}% ({share['part']}/{share['whole']})"
            if share["whole"] else "n/a")


def markdown(doc: dict[str, Any]) -> str:
    """One table row per set and way, then the routing calls' timings."""
    lines = [f"# Routing eval: {doc['model']}", "",
             f"- date: {doc['date']}", f"- llama-server: {doc['llama']}",
             f"- routing: {json.dumps(doc['routing'])}", "",
             "| set | way | refused off-topic/word salad/injection | answerable answered "
             "| evidence recall | private refused |", "|---|---|---|---|---|---|"]
    for entry in doc["sets"]:
        for way, values in entry["summary"]["ways"].items():
            lines.append(f"| {entry['set']} | {way} | {_rate(values['refused_gated'])} | "
                         f"{_rate(values['answered'])} | {_rate(values['evidence_recall'])} | "
                         f"{_rate(values['refused_private'])} |")
    lines += ["", "| set | routing calls | intents | fallbacks | latency p50/p95 ms "
              "| TTFT p50/p95 ms | cached share |", "|---|---|---|---|---|---|---|"]
    for entry in doc["sets"]:
        s = entry["summary"]
        warm = s["warm_calls"]
        lines.append(
            f"| {entry['set']} | {s['routing_calls']} | {json.dumps(s['intents'])} | "
            f"{json.dumps(s['fallbacks'])} | {warm['latency_ms']['p50']:.0f} / "
            f"{warm['latency_ms']['p95']:.0f} | {warm['ttft_ms']['p50']:.0f} / "
            f"{warm['ttft_ms']['p95']:.0f} | {warm['cached_share']} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: measure the sets against one llama-server, write JSON and Markdown."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=Path, required=True,
                        help="built sites, one folder per site name (evals.retrieval_sets)")
    parser.add_argument("--llama", required=True, help="llama-server base URL")
    parser.add_argument("--model-name", required=True, help="the model llama-server runs")
    parser.add_argument("--only", action="append", choices=[s.name for s in SETS] + ["battery-v2"])
    parser.add_argument("--limit", type=int, default=None, help="first N questions of each set")
    parser.add_argument("--out", type=Path, default=report.default_dir())
    parser.add_argument("--label", default=None, help="report name (default from the model)")
    args = parser.parse_args(argv)
    sets = list({s.name: s for s in [*SETS, battery_v2()]}.values())
    names = args.only or ["battery-v2", "netbox", "evaluationcontext-blog", "drf-docs"]
    settings = Routing()
    doc: dict[str, Any] = {
        "kind": "routing-eval", "model": args.model_name, "llama": args.llama,
        "date": datetime.now(UTC).isoformat(timespec="seconds"), "routing": asdict(settings),
        "sets": [],
    }
    stem = report.slug(args.label or f"routing-{args.model_name}")
    args.out.mkdir(parents=True, exist_ok=True)
    for eval_set in (s for s in sets if s.name in names):
        doc["sets"].append(asyncio.run(run_set(eval_set, args.sites / eval_set.site, args.llama,
                                               settings, args.limit)))
        text = markdown(doc)
        (args.out / f"{stem}.json").write_text(json.dumps(doc, indent=2) + "\n", "utf-8")
        (args.out / f"{stem}.md").write_text(text, "utf-8")
    print(markdown(doc), end="")
    print(f"wrote {args.out / stem}.json and .md")
    return 0


def battery_v2() -> EvalSet:
    from site_knowledge.evals.dataset import battery_dir

    return EvalSet("battery-v2", "example", battery_dir() / "v2.jsonl")


if __name__ == "__main__":
    raise SystemExit(main())
