"""The sharded artifact against the single file, side by side in one run, on the box's path.

    python -m benchmarks.bench_shards --sites /tmp/sk [--reuse] [--out evals/reports/shards-DATE]

Builds each site with ``artifact: sharded`` (the single file is written too; ``--reuse``
re-cuts the shards of the built sites), embeds every question of its sets once (Python's
encoder, the model the box runs), and hands both to ``bench_shards.mjs``, which searches each
question with retrieval.js over the single file and with shards.js over the shards: reading
the vectors whole (the default), and cut into k-means partitions at several probe counts (a
copy of the site's folder cut with ``whole_rows_bytes=0``, what a very large site gets).
Measured: top-4 agreement (same ids, same order), gate agreement, bytes fetched (opening; a
first question on a fresh cache; each later question with the cache of those before) and
search milliseconds in Node. The query vectors are the same on both sides, so a difference is
the shards' alone.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

from evals.sites import REPO, SITES, build, build_arguments, parse_build_arguments
from site_knowledge.compiler.shards import ShardSizes, write_layout
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
CORPUS_QUESTIONS = tuple(path for name, files in QUESTION_SETS.items() if name != "example"
                         for path in files)
"""The four corpora's questions: a synthetic site's pages are theirs."""
PROBES = (2, 4, 8, 1_000_000)
"""Partitions opened per query vector in the partitioned layout; the last opens them all."""
ASSETS = "assets/site-knowledge"
WHOLE = ShardSizes(whole_rows_bytes=sys.maxsize)
PARTITIONED = ShardSizes(whole_rows_bytes=0)


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


def run(sites_dir: Path, reuse: bool, synthetic: list[Path]) -> dict[str, Any]:
    """Build every site sharded (or re-cut the shards of a built one), cut the built synthetic
    sites' artifacts too (asked every corpus's questions: their pages are the corpora's), and
    measure them in Node."""
    built = []
    for name in QUESTION_SETS:
        site_dir = sites_dir / f"{name}-sharded"
        if not reuse:
            build(SITES[name], site_dir, artifact="sharded", chat=False)
        built.append((name, site_dir, QUESTION_SETS[name]))
    built += [(f"synthetic {site.name}", site, CORPUS_QUESTIONS) for site in synthetic]
    entries = []
    for name, site_dir, files in built:
        assets = site_dir / ASSETS
        write_layout(assets / "site-knowledge.json", True, WHOLE)
        partitioned = site_dir / "partitioned"
        shutil.rmtree(partitioned, ignore_errors=True)
        shutil.copytree(assets, partitioned)
        write_layout(partitioned / "site-knowledge.json", True, PARTITIONED)
        turns = json.loads((assets / "site-knowledge.json").read_text())["retrieval"]["followup_turns"]
        entries.append({"name": name, "dir": str(assets), "partitioned": str(partitioned),
                        "questions": questions(files, turns)})
    with tempfile.TemporaryDirectory() as scratch:
        given, got = Path(scratch) / "in.json", Path(scratch) / "out.json"
        given.write_text(json.dumps({"sites": entries, "probes": list(PROBES)}))
        subprocess.run(["node", str(REPO / "benchmarks" / "bench_shards.mjs"), str(given), str(got)],
                       check=True, cwd=REPO)
        result: dict[str, Any] = json.loads(got.read_text())
    return result


def _dense(measured: dict[str, Any]) -> str:
    """How the vectors were read: whole, or some of the partitions."""
    if measured["probes"] is None:
        return "whole"
    return f"{min(measured['probes'], measured['partitions'])} of {measured['partitions']}"


def _kb(count: float) -> str:
    return f"{count / 1024:.0f} KB"


def table(result: dict[str, Any]) -> str:
    """One row per site and probe count."""
    rows = ["| site | passages | single file | dense | opening | first question p50 / p95 | "
            "later p50 / p95 | top-4 agree | gate agree | search ms p50 / p95 (single) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for site in result["sites"]:
        shown = set()
        for s in site["sharded"]:
            if _dense(s) in shown:
                continue
            shown.add(_dense(s))
            first, later, ms, single = (s["first_question_bytes"], s["later_question_bytes"],
                                        s["search_ms"], site["single_search_ms"])
            rows.append(
                f"| {site['site']} | {site['passages']} | {_kb(site['single_bytes'])} | "
                f"{_dense(s)} | {_kb(s['opening_bytes'])} | "
                f"{_kb(first['p50'])} / {_kb(first['p95'])} | {_kb(later['p50'])} / {_kb(later['p95'])} | "
                f"{s['top4_agreement']:.3f} | {s['gate_agreement']:.3f} | "
                f"{ms['p50']:.1f} / {ms['p95']:.1f} ({single['p50']:.1f} / {single['p95']:.1f}) |")
    return "\n".join(rows)


def chromium(sites_dir: Path, reuse: bool, name: str) -> dict[str, Any]:
    """The box in Chromium on ``name`` built sharded with the chat box: every question of its
    sets (without their history) searched from the shards and from the single file, in order
    (tests/browser/shards_box.mjs)."""
    site_dir = sites_dir / f"{name}-box"
    if reuse:
        write_layout(site_dir / ASSETS / "site-knowledge.json", True)
    else:
        build(SITES[name], site_dir, artifact="sharded")
    return in_chromium(site_dir, name, QUESTION_SETS[name])


def chromium_synthetic(site_dir: Path) -> dict[str, Any]:
    """The box in Chromium on a built synthetic site (with its chat box), its shards cut again
    as a build of its size cuts them, asked every corpus question."""
    write_layout(site_dir / ASSETS / "site-knowledge.json", True)
    return in_chromium(site_dir, f"synthetic {site_dir.parent.parent.name}", CORPUS_QUESTIONS)


def in_chromium(site_dir: Path, name: str, files: tuple[Path, ...]) -> dict[str, Any]:
    """Ask ``files``' questions to the box on the built ``site_dir``, from the shards and from
    the single file: agreement, bytes and the worker's milliseconds."""
    asked = [json.loads(line)["question"] for path in files
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.NamedTemporaryFile("w", suffix=".json") as given:
        given.write(json.dumps(asked))
        given.flush()
        done = subprocess.run(["node", str(REPO / "tests" / "browser" / "shards_box.mjs"),
                               str(site_dir), given.name], check=True, cwd=REPO,
                              capture_output=True, text=True)
    seen = json.loads(done.stdout.splitlines()[-1])
    pairs = list(zip(seen["sharded"]["asked"], seen["single"]["asked"], strict=True))
    return {
        "site": name, "questions": len(asked),
        "top4_agreement": sum(a["ids"] == b["ids"] for a, b in pairs) / len(pairs),
        "gate_agreement": sum(a["answerable"] == b["answerable"] for a, b in pairs) / len(pairs),
        **{kind: _timed(seen[kind]) for kind in ("sharded", "single")},
    }


def _timed(run: dict[str, Any]) -> dict[str, Any]:
    asked = run["asked"]
    later = [q["artifact_bytes"] for q in asked[1:]]
    return {"first_question_bytes": asked[0]["artifact_bytes"],
            "later_question_bytes": {"p50": _percentile(later, 0.5), "p95": _percentile(later, 0.95)},
            "all_questions_bytes": sum(q["artifact_bytes"] for q in asked),
            **{f"{what}_ms": {"p50": _percentile([q[f"{what}_ms"] for q in asked], 0.5),
                              "p95": _percentile([q[f"{what}_ms"] for q in asked], 0.95)}
               for what in ("search", "embed")}}


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else 0


def chromium_table(runs: list[dict[str, Any]]) -> str:
    """One row per site and artifact: bytes and the worker's milliseconds per question."""
    rows = ["| site | artifact | first question | later p50 / p95 | all questions | "
            "search ms p50 / p95 | embedding ms p50 / p95 | top-4 / gate agree |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for run in runs:
        for kind in ("sharded", "single"):
            t = run[kind]
            rows.append(
                f"| {run['site']} | {kind} | {_kb(t['first_question_bytes'])} | "
                f"{_kb(t['later_question_bytes']['p50'])} / {_kb(t['later_question_bytes']['p95'])} | "
                f"{_kb(t['all_questions_bytes'])} | "
                f"{t['search_ms']['p50']:.0f} / {t['search_ms']['p95']:.0f} | "
                f"{t['embed_ms']['p50']:.0f} / {t['embed_ms']['p95']:.0f} | "
                f"{run['top4_agreement']:.3f} / {run['gate_agreement']:.3f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    build_arguments(parser)
    parser.add_argument("--out", type=Path, help="write OUT.json and OUT.md")
    parser.add_argument("--chromium", action="append", default=[], choices=sorted(QUESTION_SETS),
                        help="also ask this site's questions to the box in Chromium (repeatable)")
    parser.add_argument("--synthetic", action="append", default=[], type=Path, metavar="SITE",
                        help="also measure this built benchmarks.synthetic_site site (repeatable)")
    parser.add_argument("--chromium-synthetic", action="append", default=[], type=Path,
                        metavar="SITE", help="also ask the corpora's questions to the box in "
                        "Chromium on this built synthetic site with its chat box (repeatable)")
    parser.add_argument("--chromium-only", action="store_true",
                        help="only the Chromium runs (no Node table)")
    args = parse_build_arguments(parser, argv)
    with tempfile.TemporaryDirectory() as scratch:
        sites = args.sites or Path(scratch)
        result = {"sites": []} if args.chromium_only else run(sites, args.reuse, args.synthetic)
        result["date"] = date.today().isoformat()
        result["chromium"] = [*(chromium(sites, args.reuse, name) for name in args.chromium),
                              *(chromium_synthetic(site) for site in args.chromium_synthetic)]
    text = "\n\n".join([*([table(result)] if result["sites"] else []),
                         *([chromium_table(result["chromium"])] if result["chromium"] else [])])
    print(text)
    if args.out:
        args.out.with_suffix(".json").write_text(json.dumps(result, indent=1))
        args.out.with_suffix(".md").write_text(report(result, text))


def report(result: dict[str, Any], text: str) -> str:
    """The Markdown report: what was measured, how, and the tables."""
    return (f"# Sharded artifact against the single file, {result['date']}\n\n"
            "`python -m benchmarks.bench_shards --sites DIR --chromium SITE "
            "--out evals/reports/shards-DATE`: each site built with `artifact: sharded`; every "
            "question of its sets embedded once (Python's encoder) and searched in Node by "
            "retrieval.js over the single file and by shards.js over the shards, reading the "
            "vectors whole (the default) or cut into k-means partitions with some of them open "
            "(what a site above `whole_rows_bytes` gets). Top-4 agreement: the same ids in the "
            "same order. Bytes: opening (manifest, passage lengths, vectors when read whole or "
            "centroids and page vectors when partitioned, gate reference, ontology texts); a "
            "first question on a fresh cache; each later question with the cache of those "
            "before, in set order. Search times are Node's on this machine (machine-bound), "
            "single file in brackets.\n\n"
            "The second table is the box in Chromium (tests/browser/shards_box.mjs, search "
            "engine only): each question asked in set order without its history, from the "
            "shards and from the single file; bytes are what the loopback server sent of the "
            "artifact (the first question's include opening the box; the box also fetches the "
            "lexical shards of the premise check and of grounding's terms); search and "
            "embedding times are the worker's.\n\n" + text + "\n")


if __name__ == "__main__":
    main()
