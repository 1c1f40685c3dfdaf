"""Build cost of the plugin against plain ``mkdocs build`` on the same site, in one run.

Each repeat builds, in this order and side by side: the plain site, the site with the plugin
from an empty cache (model preparation included: ``SITE_KNOWLEDGE_CACHE`` and ``cache_dir``
both empty), again from an empty embedding cache with the model prepared (cold), and once
more with nothing changed (warm). Each build is a fresh ``python -m mkdocs build`` process;
its ratio is taken against the plain build of the same repeat, in wall time and in CPU time
(user + system of the process, less sensitive to other load on a shared machine), and the
medians over repeats are reported with the load average seen. The artifact's bytes per
passage beyond the passage text and the Python reader's query latency follow.

    .venv/bin/python -m benchmarks.bench_build --site netbox --repeat 3
    .venv/bin/python -m benchmarks.bench_build --site netbox --repeat 5 --warm-only

``--warm-only`` measures plain and warm builds alone, after one untimed build on the default
cache folder (quick where that folder already holds the site's embeddings): what a shared
machine under load can still measure in minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evals.sites import dump_config, read_config

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "homepage"
SITES = {"netbox": REPO / "tests" / "corpora" / "netbox-docs", "example": EXAMPLE}
QUESTIONS = {
    "netbox": ["How do I configure LDAP authentication?", "What is a VRF?",
               "How do I back up the database before upgrading?", "rack elevations",
               "Which settings control the login timeout?", "How do webhooks work?",
               "What does the napalm integration do?", "How are prefixes nested?"],
    "example": ["Where does Teo live now?", "What is slotmeter?", "When did he move to Vienna?",
                "What talks has he given?", "tram clock", "Which employers came after Berlin?"],
}
KINDS = ("empty", "cold", "warm")


def _prepare(site: str, workdir: Path, with_plugin: bool) -> Path:
    source = SITES[site]
    target = workdir / ("plugin" if with_plugin else "plain")
    shutil.copytree(source / "docs", target / "docs")
    config = read_config(source / "mkdocs.yml")  # as MkDocs reads it: !ENV, !relative
    plugins = [p for p in config.get("plugins", []) if not (
        p == "site-knowledge" or (isinstance(p, dict) and "site-knowledge" in p))]
    if with_plugin:
        options: dict[str, Any] = {"chat": False}
        if site == "example":
            options["ontology"] = str(EXAMPLE / "ontology.py")
        plugins.append({"site-knowledge": options})
    config["plugins"] = plugins
    (target / "mkdocs.yml").write_text(dump_config(config), encoding="utf-8")
    return target / "mkdocs.yml"


def use_cache(config_file: Path, cache: Path) -> None:
    """Point the plugin (last in ``config_file``'s plugins) at the cache folder ``cache``."""
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    config["plugins"][-1]["site-knowledge"]["cache_dir"] = str(cache)
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


@dataclass(frozen=True)
class BuildCost:
    """One build process: wall and CPU (user + system) seconds, peak resident memory."""

    wall: float
    cpu: float
    peak_rss_mib: float


def run_build(config_file: Path, model_cache: Path | None = None) -> BuildCost:
    """Run one ``mkdocs build -q`` process into ``site/`` beside ``config_file``; its stderr
    (warnings, progress) goes to a ``build.log`` there.

    Raises:
        SystemExit: the build failed (its log named).
    """
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if model_cache is not None:
        env["SITE_KNOWLEDGE_CACHE"] = str(model_cache)
    log = config_file.parent / "build.log"
    started = time.perf_counter()
    with log.open("wb") as handle:
        process = subprocess.Popen([sys.executable, "-m", "mkdocs", "build", "-q", "-f",
                                    str(config_file), "-d", str(config_file.parent / "site")],
                                   env=env, stdout=handle, stderr=handle)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"mkdocs build of {config_file} failed: see {log}")
    return BuildCost(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def _build(config_file: Path, model_cache: Path | None = None) -> tuple[float, float]:
    """One ``mkdocs build`` process: (wall seconds, CPU seconds)."""
    cost = run_build(config_file, model_cache)
    return cost.wall, cost.cpu


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _median_ratio(times: list[tuple[float, float]], baseline: list[tuple[float, float]],
                  part: int) -> float:
    return round(statistics.median(t[part] / b[part] for t, b in zip(times, baseline, strict=True)), 2)


def bytes_per_passage(artifact_path: Path) -> tuple[dict[str, Any], int, float, int]:
    """The artifact's bytes (JSON and vectors), per passage beyond its text, and the gate's
    reference file apart: the same bytes for every site, so not a cost per passage."""
    from site_knowledge.retrieval.artifact import load_artifact

    artifact, _ = load_artifact(artifact_path)
    passages = artifact["passages"]
    text_bytes = sum(len(p["text"].encode("utf-8")) for p in passages)
    sidecar = artifact_path.parent / artifact["vectors"]["file"]
    total = artifact_path.stat().st_size + sidecar.stat().st_size
    reference = artifact_path.parent / artifact["gate"]["elsewhere"]["file"]
    return artifact, total, round((total - text_bytes) / len(passages), 1), reference.stat().st_size


def _query_latency(artifact_path: Path, site: str) -> dict[str, dict[str, float]]:
    from site_knowledge.retrieval import load_index

    index = load_index(artifact_path)
    index.search("warm up the encoder")
    latencies = {}
    for mode in ("hybrid", "bm25", "dense"):
        times = []
        for _ in range(5):
            for question in QUESTIONS[site]:
                started = time.perf_counter()
                index.search(question, mode=mode)
                times.append((time.perf_counter() - started) * 1000)
        latencies[mode] = {"p50_ms": round(_percentile(times, 0.5), 2),
                           "p95_ms": round(_percentile(times, 0.95), 2)}
    return latencies


def main() -> None:
    """Run the benchmark and print a JSON report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--site", choices=sorted(SITES), default="netbox")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warm-only", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    times: dict[str, list[tuple[float, float]]] = {kind: [] for kind in ("plain", *KINDS)}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plain = _prepare(args.site, work, False)
        with_plugin = _prepare(args.site, work, True)
        prepared_model = work / "model-cache"
        if args.warm_only:
            _build(with_plugin)
        for run in range(args.repeat):
            if args.warm_only:
                times["plain"].append(_build(plain))
                times["warm"].append(_build(with_plugin))
                continue
            times["plain"].append(_build(plain))
            use_cache(with_plugin, work / f"empty-{run}")
            times["empty"].append(_build(with_plugin, work / f"empty-model-{run}"))
            if run == 0:
                shutil.copytree(work / "empty-model-0", prepared_model)
            use_cache(with_plugin, work / f"cache-{run}")
            times["cold"].append(_build(with_plugin, prepared_model))
            times["warm"].append(_build(with_plugin, prepared_model))
        artifact_path = with_plugin.parent / "site" / "assets" / "site-knowledge" / "site-knowledge.json"
        artifact, total, beyond_text, reference_bytes = bytes_per_passage(artifact_path)
        latencies = _query_latency(artifact_path, args.site)
    passages = len(artifact["passages"])
    kinds = [kind for kind in KINDS if times[kind]]
    report = {
        "site": args.site, "repeat": args.repeat, "passages": passages,
        "load_average_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "seconds_wall_cpu": {kind: [[round(w, 2), round(c, 2)] for w, c in runs]
                             for kind, runs in times.items()},
        **{f"{kind}_ratio": _median_ratio(times[kind], times["plain"], 0) for kind in kinds},
        **{f"{kind}_ratio_cpu": _median_ratio(times[kind], times["plain"], 1) for kind in kinds},
        "artifact_bytes_total": total,
        "bytes_per_passage_beyond_text": beyond_text,
        "gate_reference_bytes": reference_bytes,
        "query_latency": latencies,
    }
    if times["cold"]:
        plain_wall = statistics.median(t[0] for t in times["plain"])
        cold_wall = statistics.median(t[0] for t in times["cold"])
        report["embedding_passages_per_s"] = round(passages / max(cold_wall - plain_wall, 1e-9), 1)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
