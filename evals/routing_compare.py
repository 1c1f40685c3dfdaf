"""One comparison of routing on and off across models: the routing evals of each model
(``evals.routing_eval``) and, where run, battery reports with and without routing
(``site-knowledge eval --engine gateway``), with the decision rule applied.

    python -m evals.routing_compare evals/reports/routing-qwen2.5-coder-0.5b.json ... \\
        [--battery off=A.json --battery on=B.json] [--default qwen2.5-coder-1.5b]

A model is routed by default when routing *helps* it: summed over every question set, the
router refuses more off-topic, word-salad and injection questions than it costs answerable
ones, and the evidence recall does not fall.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from site_knowledge.evals import report

REFUSAL_TARGET = 0.90
ANSWERED_TARGET = 0.95


def _rate(share: dict[str, Any]) -> str:
    if not share["whole"]:
        return "n/a"
    return f"{100 * share['part'] / share['whole']:.1f}% ({share['part']}/{share['whole']})"


def verdict(doc: dict[str, Any]) -> dict[str, Any]:
    """What routing changed for one model, summed over its sets, and whether it helps."""
    gained = lost = recall_delta = 0
    for entry in doc["sets"]:
        ways = entry["summary"]["ways"]
        gained += ways["routed"]["refused_gated"]["part"] - ways["hybrid"]["refused_gated"]["part"]
        lost += ways["hybrid"]["answered"]["part"] - ways["routed"]["answered"]["part"]
        recall_delta += (ways["routed"]["evidence_recall"]["part"]
                         - ways["hybrid"]["evidence_recall"]["part"])
    return {"refused_gained": gained, "answerable_lost": lost, "recall_delta": recall_delta,
            "helps": gained > lost and recall_delta >= 0}


def shortfalls(doc: dict[str, Any]) -> list[str]:
    """Where the routed way misses the acceptance targets, set by set."""
    out = []
    for entry in doc["sets"]:
        routed = entry["summary"]["ways"]["routed"]
        for key, target, what in (("refused_gated", REFUSAL_TARGET, "refusal"),
                                  ("answered", ANSWERED_TARGET, "answerable answered")):
            share = routed[key]
            if share["whole"] and share["part"] / share["whole"] < target:
                need = -(-target * share["whole"] // 1) - share["part"]
                out.append(f"{entry['set']}: {what} {_rate(share)}, target {target:.0%} "
                           f"({int(need)} question(s) short)")
    return out


def timings(doc: dict[str, Any]) -> dict[str, Any]:
    """The routing calls' cold first call and warm percentiles, over every set."""
    calls = [o for entry in doc["sets"] for o in entry["outcomes"] if o["route"] is not None]
    firsts = [next((o for o in entry["outcomes"] if o["route"] is not None), None)
              for entry in doc["sets"]]
    cold = [float(o["timings"]["ttft_ms"]) for o in firsts if o and o["timings"].get("ttft_ms")]
    return {
        "calls": len(calls),
        "cold_ttft_ms": cold,
        "warm_by_set": {entry["set"]: entry["summary"]["warm_calls"] for entry in doc["sets"]},
        "fallbacks": sum(sum(entry["summary"]["fallbacks"].values()) for entry in doc["sets"]),
    }


def _battery_row(name: str, doc: dict[str, Any]) -> list[str]:
    summary = doc["summary"]
    cats = " · ".join(f"{c} {v['score']}/{v['max']}" for c, v in summary["by_category"].items())
    latency = doc.get("latency_ms", {})
    return [name, f"{summary['score']}/{summary['max']} ({summary['percent']:.1f}%)", cats,
            f"{latency.get('p50', 0) / 1000:.1f} / {latency.get('p95', 0) / 1000:.1f} s"]


def markdown(doc: dict[str, Any]) -> str:
    """The comparison as Markdown: per set and model, timings, verdicts, shortfalls."""
    lines = ["# Routing on slot 0: with and without, per model", "",
             f"- date: {doc['date']}", f"- default model: {doc['default']}",
             "- rule: routing is on by default for a model when, summed over every set, it "
             "refuses more off-topic/word-salad/injection questions than it costs answerable "
             "ones and the evidence recall does not fall", "",
             "| set | model | refused off-topic/salad/injection: off → on | answerable "
             "answered: off → on | evidence recall: off → on | private refused: off → on |",
             "|---|---|---|---|---|---|"]
    for model in doc["models"]:
        for entry in model["sets"]:
            ways = entry["summary"]["ways"]
            cells = [f"{_rate(ways['hybrid'][k])} → {_rate(ways['routed'][k])}"
                     for k in ("refused_gated", "answered", "evidence_recall",
                               "refused_private")]
            lines.append(f"| {entry['set']} | {model['model']} | " + " | ".join(cells) + " |")
    lines += ["", "| model | routing calls | fallbacks | cold TTFT (first call per set) "
              "| warm latency p50/p95 per set | warm TTFT p50/p95 per set | cached share "
              "per set | verdict |", "|---|---|---|---|---|---|---|---|"]
    for model in doc["models"]:
        t, v = model["timings"], model["verdict"]
        warm = t["warm_by_set"]
        lat = "; ".join(f"{s} {w['latency_ms']['p50'] / 1000:.1f}/{w['latency_ms']['p95'] / 1000:.1f} s"
                        for s, w in warm.items())
        ttft = "; ".join(f"{s} {w['ttft_ms']['p50'] / 1000:.1f}/{w['ttft_ms']['p95'] / 1000:.1f} s"
                         for s, w in warm.items())
        cached = "; ".join(f"{s} {w['cached_share']}" for s, w in warm.items())
        cold = ", ".join(f"{c / 1000:.1f} s" for c in t["cold_ttft_ms"])
        word = "helps: on by default" if v["helps"] else "does not help: off by default"
        lines.append(f"| {model['model']} | {t['calls']} | {t['fallbacks']} | {cold} | {lat} | "
                     f"{ttft} | {cached} | +{v['refused_gained']} refused, "
                     f"−{v['answerable_lost']} answered, recall {v['recall_delta']:+d}: "
                     f"{word} |")
    if doc.get("battery"):
        lines += ["", "Battery v2 with answers (`site-knowledge eval --engine gateway`):", "",
                  "| run | score | by category | latency p50 / p95 |", "|---|---|---|---|"]
        lines += ["| " + " | ".join(_battery_row(name, b)) + " |"
                  for name, b in doc["battery"].items()]
    default = next((m for m in doc["models"] if m["model"] == doc["default"]), None)
    if default is not None:
        missing = default["shortfalls"]
        lines += ["", f"Acceptance with the default model ({doc['default']}) and routing on: "
                  + ("met on every set." if not missing else "not met:"), ""]
        lines += [f"- {m}" for m in missing]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: read the routing evals (and battery reports), write the comparison."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("evals", nargs="+", type=Path, help="routing eval JSON reports")
    parser.add_argument("--battery", action="append", default=[], metavar="NAME=REPORT",
                        help="a battery report (site-knowledge eval) to show, e.g. off=A.json")
    parser.add_argument("--default", default="qwen2.5-coder-1.5b", help="the default model")
    parser.add_argument("--out", type=Path, default=report.default_dir())
    args = parser.parse_args(argv)
    models = []
    for path in args.evals:
        data = json.loads(path.read_text(encoding="utf-8"))
        models.append({"model": data["model"], "file": path.name, "routing": data["routing"],
                       "sets": data["sets"], "verdict": verdict(data),
                       "shortfalls": shortfalls(data), "timings": timings(data)})
    battery = {}
    for spec in args.battery:
        name, _, file = spec.partition("=")
        battery[name] = report.load(Path(file))
    doc = {"kind": "routing-comparison", "date": datetime.now(UTC).isoformat(timespec="seconds"),
           "default": args.default, "models": models, "battery": battery}
    text = markdown(doc)
    print(text, end="")
    slim = {**doc, "models": [{**m, "sets": [{k: v for k, v in s.items() if k != "outcomes"}
                                             for s in m["sets"]]} for m in models],
            "battery": {n: {"file": spec, "summary": b["summary"],
                            "latency_ms": b.get("latency_ms")}
                        for (n, b), spec in zip(battery.items(), args.battery, strict=True)}}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "routing-comparison.json").write_text(json.dumps(slim, indent=2) + "\n", "utf-8")
    (args.out / "routing-comparison.md").write_text(text, "utf-8")
    print(f"wrote {args.out / 'routing-comparison'}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
