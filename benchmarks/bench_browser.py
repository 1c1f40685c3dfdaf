"""The chat box in a real browser: what it costs a visitor and how fast it answers.

For the example site and netbox-docs, in Debian's chromium (offline, loopback only): bytes per
page view before the box opens, bytes on first open split by artifact / encoder / WASM runtime,
warm in-browser embed + search p50/p95, end-to-end refusal latency, and (example site) the
wllama CPU model's prefill and decode speed. Times are machine-bound.

    .venv/bin/python -m benchmarks.bench_browser [--json OUT] [--no-wllama]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from evals.sites import REPO, SITES, build
from site_knowledge.evals.dataset import load_battery, load_questions

OFF_TOPIC = [
    "What is the capital of Australia?",
    "What is a good recipe for banana bread?",
    "Who won the 2018 FIFA World Cup?",
    "What will the weather be in Paris tomorrow?",
    "How many calories are in a boiled egg?",
    "What is the plot of the novel Moby-Dick?",
]


def example_questions() -> list[str]:
    items = load_battery("v1").items
    return [i.question for i in items if i.category in ("lookup", "synthesis")][:25]


def netbox_questions() -> list[str]:
    questions = load_questions(REPO / "evals" / "netbox" / "questions.jsonl")
    return [q.question for q in questions if q.in_scope]


def run(site: Path, questions: list[str], wllama: bool, work: Path) -> dict[str, Any]:
    (work / "q.json").write_text(json.dumps(questions))
    (work / "off.json").write_text(json.dumps(OFF_TOPIC))
    args = ["node", str(REPO / "benchmarks/bench_browser.mjs"), str(site), str(work / "q.json"),
            str(work / "off.json"), *(["--wllama"] if wllama else [])]
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, check=True, timeout=1800)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def kib(n: float) -> str:
    return f"{n / 1024:,.1f} KiB" if n < 1 << 20 else f"{n / (1 << 20):,.1f} MiB"


def report(name: str, r: dict[str, Any]) -> None:
    view, first, warm, refusal = r["pageView"], r["firstOpen"], r["warm"], r["refusal"]
    print(f"## {name}")
    print(f"page view, ours: launcher.js {kib(view['launcherBytes'])} + inline config "
          f"{view['tagBytes']} B (the theme's page and assets: {kib(view['allBytes'].get('theme/page', 0))})")
    print("first open: " + ", ".join(f"{k} {kib(v)}" for k, v in sorted(first["bytes"].items()))
          + f"; ready in {first['openMs']} ms")
    print(f"warm embed+search: p50 {warm['embedPlusSearchMs']['p50']} ms, "
          f"p95 {warm['embedPlusSearchMs']['p95']} ms (embed p50 {warm['embedMs']['p50']}, "
          f"search p50 {warm['searchMs']['p50']}; n={warm['embedMs']['n']})")
    print(f"refusal end to end: in box p50 {refusal['inBoxMs']['p50']} ms / p95 "
          f"{refusal['inBoxMs']['p95']} ms; page.evaluate round trip p50 {refusal['wallMs']['p50']} "
          f"ms; refused {refusal['refused']}/{refusal['of']}")
    if r.get("wllama"):
        print(f"wllama download on first use: {kib(r['wllama']['modelBytes'])} "
              "(wllama.js + wllama.wasm + GGUF)")
        for i, a in enumerate(r["wllama"]["answers"], start=1):
            t = a["timing"] or {}
            print(f"wllama answer {i}: prefill {t.get('prompt_n')} tok at "
                  f"{t.get('prompt_per_second', 0):.1f} tok/s ({t.get('cache_n')} cached), decode "
                  f"{t.get('predicted_n')} tok at {t.get('predicted_per_second', 0):.1f} tok/s, "
                  f"first token {t.get('firstTokenMs', 0) / 1000:.1f} s, total {a['wallMs'] / 1000:.1f} s")
    if r["offsite"]:
        print(f"WARNING: non-loopback requests attempted: {r['offsite']}")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument("--no-wllama", action="store_true", help="skip the CPU model")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sk-bench-browser-"))
    results = {}
    example = build(SITES["example"], work / "example")
    results["example"] = run(example, example_questions(), not args.no_wllama, work)
    report("example site", results["example"])
    netbox = build(SITES["netbox"], work / "netbox")
    results["netbox"] = run(netbox, netbox_questions(), False, work)
    report("netbox-docs", results["netbox"])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
