"""The sharded artifact against the single file, side by side in one run, on the box's path.

    python -m benchmarks.bench_shards --sites /tmp/sk [--reuse] [--out evals/reports/shards-DATE]

Builds each site with ``artifact: sharded`` (the single file is written too), embeds every
question of its sets once (Python's encoder, the model the box runs), and hands both to
``bench_shards.mjs``, which searches each question with retrieval.js over the single file and
with shards.js over the shards at several probe counts: top-4 agreement (same ids, same
order), gate agreement, bytes fetched (opening; a first question on a fresh cache; each later
question with the cache of those before) and search milliseconds in Node. The query vectors
are the same on both sides, so a difference is the shards' alone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

from evals.sites import REPO, SITES, build, build_arguments, parse_build_arguments
from site_knowledge.compiler.shards import write_layout
from site_knowledge.evals.dataset import battery_dir
from site_knowledge.retrieval.index import gate_query, retrieval_query

QUESTION_SETS: dict[str, tuple[Path, ...]] = {
    "example": (battery_dir() / "v1.jsonl", battery_dir() / "v2.jsonl"),
    **{name: tuple(p for p in (REPO / "evals" / folder / "questions.jsonl",
                               REPO / "evals" / folder / "answers.jsonl") if p.exists())
       for name, folder in (("netbox", "netbox"), ("drf-docs", "drf-docs"),
                            ("evaluationcontext-blog", "evaluationcontext-blog"),
                            ("fastapi-docs", "fastapi-docs"))},
}
PROBES = (2, 4, 8, 1_000_000)
"""Partitions opened per query vector; the last opens them all (the shards' own ceiling)."""
ASSETS = "assets/site-knowledge"


def questions(files: tuple[Path, ...], followup_turns: int) -> list[dict[str, Any]]:
    """Each question's gate text and, for a follow-up, its retrieval text, embedded."""
    from site_knowledge.embedding import Encoder

    out: list[dict[str, Any]] = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            history = [h["question"] if isinstance(h, dict) else h for h in item.get("history", [])]
            text = gate_query(item["question"], history, followup_turns)
            rank = retrieval_query(item["question"], history, followup_turns)
            out.append({"set": f"{path.parent.name}/{path.stem}", "text": text,
                        "rank_text": None if rank == text else rank})
    encoder = Encoder()
    texts = [q["text"] for q in out] + [q["rank_text"] for q in out if q["rank_text"]]
    vectors = iter(encoder.encode(texts).tolist())
    for q in out:
        q["vector"] = next(vectors)
    for q in out:
        if q["rank_text"]:
            q["rank_vector"] = next(vectors)
    return out


def run(sites_dir: Path, reuse: bool) -> dict[str, Any]:
    """Build every site sharded (or re-cut the shards of a built one) and measure it in Node."""
    entries = []
    for name, files in QUESTION_SETS.items():
        site_dir = sites_dir / f"{name}-sharded"
        assets = site_dir / ASSETS
        if reuse:
            write_layout(assets / "site-knowledge.json", True)
        else:
            build(SITES[name], site_dir, artifact="sharded", chat=False)
        turns = json.loads((assets / "site-knowledge.json").read_text())["retrieval"]["followup_turns"]
        entries.append({"name": name, "dir": str(assets), "questions": questions(files, turns)})
    with tempfile.TemporaryDirectory() as scratch:
        given, got = Path(scratch) / "in.json", Path(scratch) / "out.json"
        given.write_text(json.dumps({"sites": entries, "probes": list(PROBES)}))
        subprocess.run(["node", str(REPO / "benchmarks" / "bench_shards.mjs"), str(given), str(got)],
                       check=True, cwd=REPO)
        result: dict[str, Any] = json.loads(got.read_text())
    result["date"] = date.today().isoformat()
    return result


def _kb(count: float) -> str:
    return f"{count / 1024:.0f} KB"


def table(result: dict[str, Any]) -> str:
    """One row per site and probe count."""
    rows = ["| site | passages | single file | probes | opening | first question p50 / p95 | "
            "later p50 / p95 | top-4 agree | gate agree | search ms p50 / p95 (single) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for site in result["sites"]:
        for s in site["sharded"]:
            first, later, ms, single = (s["first_question_bytes"], s["later_question_bytes"],
                                        s["search_ms"], site["single_search_ms"])
            rows.append(
                f"| {site['site']} | {site['passages']} | {_kb(site['single_bytes'])} | "
                f"{s['probes'] if s['probes'] < PROBES[-1] else 'all'} | {_kb(s['opening_bytes'])} | "
                f"{_kb(first['p50'])} / {_kb(first['p95'])} | {_kb(later['p50'])} / {_kb(later['p95'])} | "
                f"{s['top4_agreement']:.3f} | {s['gate_agreement']:.3f} | "
                f"{ms['p50']:.1f} / {ms['p95']:.1f} ({single['p50']:.1f} / {single['p95']:.1f}) |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    build_arguments(parser)
    parser.add_argument("--out", type=Path, help="write OUT.json and OUT.md")
    args = parse_build_arguments(parser, argv)
    with tempfile.TemporaryDirectory() as scratch:
        result = run(args.sites or Path(scratch), args.reuse)
    text = table(result)
    print(text)
    if args.out:
        args.out.with_suffix(".json").write_text(json.dumps(result, indent=1))
        args.out.with_suffix(".md").write_text(report(result, text))


def report(result: dict[str, Any], text: str) -> str:
    """The Markdown report: what was measured, how, and the table."""
    return (f"# Sharded artifact against the single file, {result['date']}\n\n"
            "`python -m benchmarks.bench_shards --sites DIR --out evals/reports/shards-DATE`: "
            "each site built with `artifact: sharded`; every question of its sets embedded once "
            "(Python's encoder) and searched in Node by retrieval.js over the single file and by "
            "shards.js over the shards with 2, 4, 8 or all partitions open. Top-4 agreement: "
            "the same ids in the same order. Bytes: opening (manifest, centroids, gate reference, "
            "ontology texts); a first question on a fresh cache; each later question with the "
            "cache of those before, in set order. Search times are Node's on this machine "
            "(machine-bound), single file in brackets. No Chromium run and no 10,000-page site "
            "in this report.\n\n" + text + "\n")


if __name__ == "__main__":
    main()
