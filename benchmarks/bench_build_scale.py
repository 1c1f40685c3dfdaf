"""Build cost as a site grows: synthetic sites of real pages at several sizes, plain against plugin.

For each size a site is made by :mod:`benchmarks.synthetic_site`, then built, side by side and
each as a fresh ``mkdocs build`` process: plain (the site's own config, no plugin), cold (the
plugin with ``chat: false`` and the single-file artifact, so neither the box's assets nor its
shards are written, from an empty embedding cache and artifact memo; the model already
prepared), warm (again, nothing changed: the memo), edited (a sentence added to one page: the
memo misses, every passage but the edited one is an embedding cache hit), then plain again
on the edited site. Each row reports wall and CPU seconds and the peak resident memory of the
build process, ratios against the mean of the two plain builds, the passages (total, and
unique embedded texts: repeated pages repeat passages, which the embedding cache embeds once,
so a cold build embeds the unique ones only) and the artifact's bytes per passage beyond its
text. The report adds each kind's cost per 1,000 pages and per 1,000 passages at every size,
and the cold build's embedding cost per unique passage, from which the cost of a site of all
different pages follows.

    .venv/bin/python -m benchmarks.bench_build_scale --pages 1000,3000 \
        --corpora /work/shared/corpora --work /tmp/scale --report evals/reports/build-scale-2026-12-05

A report that exists already keeps its other sizes: ``--pages 10000`` adds a row. With
``--seed DIR`` (a cache folder of an earlier run) the first plugin build starts from that
folder's embeddings and is reported as "seeded", not cold.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.bench_build import BuildCost, bytes_per_passage, run_build, use_cache
from benchmarks.synthetic_site import make_site
from evals.sites import dump_config, plugins_with_site_knowledge, read_config
from site_knowledge.retrieval.tokenizer import indexed_text

KINDS = ("plain", "cold", "seeded", "warm", "edited", "plain_after")
EDIT = "\n\nThis sentence was added to measure a rebuild after editing one page.\n"
PLUGIN = {"chat": False, "artifact": "single"}
"""No chat box and so no shards for it: the compile alone (the shards' cost is measured apart)."""
ARTIFACT = Path("site") / "assets" / "site-knowledge" / "site-knowledge.json"


def plugin_config(config_file: Path, cache: Path) -> Path:
    """A config in ``plugin/`` beside ``config_file`` that builds the same docs with the plugin
    set as `PLUGIN` says, its embedding cache and memo in ``cache``."""
    config = read_config(config_file)
    config["docs_dir"] = str(config_file.parent / "docs")
    config["plugins"] = plugins_with_site_knowledge(config_file, PLUGIN)
    target = config_file.parent / "plugin" / "mkdocs.yml"
    target.parent.mkdir(exist_ok=True)
    target.write_text(dump_config(config), encoding="utf-8")
    use_cache(target, cache)
    return target


def edit_one_page(docs: Path) -> Path:
    """Append a sentence to the first page of copy 0; return that page."""
    page = min((docs / "copy-000").rglob("*.md"))
    with page.open("a", encoding="utf-8") as handle:
        handle.write(EDIT)
    return page


def passage_counts(artifact: dict[str, Any]) -> tuple[int, int]:
    """Passages in the artifact and how many different texts they embed."""
    titles = {source["id"]: source["title"] for source in artifact["sources"]}
    texts = {indexed_text(titles[p["source"]], p["heading"], p["text"])
             for p in artifact["passages"]}
    return len(artifact["passages"]), len(texts)


def measure_size(corpora: Path, work: Path, pages: int, seed: Path | None = None) -> dict[str, Any]:
    """Make the site of ``pages`` pages in ``work`` and build it as the module docstring says;
    with ``seed``, a cache folder, its embeddings are copied in first (no memo), so the first
    plugin build is "seeded": a cold compile that embeds only texts ``seed`` lacks."""
    site = make_site(corpora, work / f"site-{pages}", pages)
    cache = work / f"cache-{pages}"
    shutil.rmtree(cache, ignore_errors=True)
    with_plugin = plugin_config(site.config_file, cache)
    if seed is not None:
        cache.mkdir()
        for embeddings in seed.glob("embeddings-*.npz"):
            shutil.copy(embeddings, cache)
    first = "cold" if seed is None else "seeded"
    runs: dict[str, BuildCost] = {}
    runs["plain"] = run_build(site.config_file)
    runs[first] = run_build(with_plugin)
    progress = [line for line in (with_plugin.parent / "build.log").read_text().splitlines()
                if line.startswith("site-knowledge")]
    runs["warm"] = run_build(with_plugin)
    edited = edit_one_page(site.config_file.parent / "docs")
    runs["edited"] = run_build(with_plugin)
    runs["plain_after"] = run_build(site.config_file)
    artifact, total, beyond_text, _ = bytes_per_passage(with_plugin.parent / ARTIFACT)
    passages, unique = passage_counts(artifact)
    plain = (runs["plain"].wall + runs["plain_after"].wall) / 2
    plain_cpu = (runs["plain"].cpu + runs["plain_after"].cpu) / 2
    return {
        "pages": pages, "copies": site.copies, "fastapi_whole": site.whole,
        "edited_page": edited.relative_to(site.config_file.parent / "docs").as_posix(),
        "passages": passages, "unique_passages": unique,
        "artifact_bytes": total, "bytes_per_passage_beyond_text": beyond_text,
        "runs": {kind: {k: round(v, 2) for k, v in asdict(cost).items()}
                 for kind, cost in runs.items()},
        "ratio_wall": {kind: round(runs[kind].wall / plain, 2) for kind in (first, "warm", "edited")},
        "ratio_cpu": {kind: round(runs[kind].cpu / plain_cpu, 2) for kind in (first, "warm", "edited")},
        f"{first}_seconds_per_unique_passage": round((runs[first].wall - plain) / unique, 4),
        "progress_lines": progress,
    }


def scaling(rows: list[dict[str, Any]]) -> dict[str, dict[str, list[float | None]]]:
    """Each kind's wall and CPU seconds per 1,000 pages and per 1,000 passages, size by size
    (None where a size was not built so): flat rows mean time grows linearly. CPU seconds
    move less with other load on a shared machine."""
    kinds = [kind for kind in KINDS if any(kind in row["runs"] for row in rows)]
    return {
        f"{measure} s per 1,000 {unit}": {
            kind: [round(1000 * row["runs"][kind][measure] / row[unit], 2)
                   if kind in row["runs"] else None for row in rows]
            for kind in kinds}
        for measure in ("wall", "cpu") for unit in ("pages", "passages")
    }


def markdown(report: dict[str, Any]) -> str:
    """The report as a Markdown page: one table of builds, one of scaling."""
    rows = report["sizes"]
    lines = [f"# Build cost at {', '.join(str(r['pages']) for r in rows)} pages", "",
             report["how"], "", f"Command: `{report['command']}`. Load average before and "
             f"after: {report['load_average_before_after']}.", "",
             "| pages | passages (unique) | build | wall s | CPU s | peak RSS MiB | × plain wall "
             "| × plain CPU |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        for kind, run in row["runs"].items():
            ratio = row["ratio_wall"].get(kind, "")
            ratio_cpu = row["ratio_cpu"].get(kind, "")
            lines.append(f"| {row['pages']} | {row['passages']} ({row['unique_passages']}) | "
                         f"{kind} | {run['wall']} | {run['cpu']} | {run['peak_rss_mib']:.0f} | "
                         f"{ratio} | {ratio_cpu} |")
    lines += ["", "| pages | artifact bytes | bytes per passage beyond text | first plugin build: s per "
              "unique passage beyond plain | copies | FastAPI whole |", "|---|---|---|---|---|---|"]
    for r in rows:
        first = "cold" if "cold" in r["runs"] else "seeded"
        lines.append(f"| {r['pages']} | {r['artifact_bytes']} | {r['bytes_per_passage_beyond_text']} | "
                     f"{first}: {r[f'{first}_seconds_per_unique_passage']} | {r['copies']} | "
                     f"{r['fastapi_whole']} |")
    lines += ["", "Seconds per 1,000 pages and per 1,000 passages (flat across sizes: linear):",
              "", "| measure | build | " + " | ".join(str(r["pages"]) for r in rows) + " |",
              "|---|---|" + "---|" * len(rows)]
    for unit, kinds in report["scaling"].items():
        lines += [f"| {unit} | {kind} | " + " | ".join("" if v is None else str(v) for v in values) + " |"
                  for kind, values in kinds.items()]
    if report.get("notes"):
        lines += ["", *report["notes"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Measure each size and write (or extend) the JSON and Markdown report."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", default="1000,3000,10000", help="sizes, comma-separated")
    parser.add_argument("--corpora", type=Path, required=True, help="folder of corpora")
    parser.add_argument("--work", type=Path, required=True, help="where sites are made and built")
    parser.add_argument("--report", type=Path, required=True, help="report path without suffix")
    parser.add_argument("--seed", type=Path, help="a cache folder whose embeddings seed each size's "
                        "cache: the first plugin build is then 'seeded', not cold")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.pages.split(",")]
    load_before = os.getloadavg()[0]
    measured = [measure_size(args.corpora, args.work, pages, args.seed) for pages in sizes]
    json_path = args.report.with_suffix(".json")
    earlier = json.loads(json_path.read_text(encoding="utf-8")) if json_path.exists() else {}
    rows = sorted([*(r for r in earlier.get("sizes", []) if r["pages"] not in sizes), *measured],
                  key=lambda row: row["pages"])
    report = {
        "how": (__doc__ or "").split("\n\n")[1].replace("\n", " "),
        "command": f"python -m benchmarks.bench_build_scale --pages {args.pages} "
                   f"--corpora {args.corpora}",
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "sizes": rows, "scaling": scaling(rows), "notes": earlier.get("notes", []),
    }
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    args.report.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))


if __name__ == "__main__":
    main()
