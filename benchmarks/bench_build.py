"""Build cost of the plugin against plain ``mkdocs build`` on the same site, in one run.

Reports cold-cache and warm-cache builds as ratios to the plain build (each the median of
``--repeat`` runs), artifact bytes per passage beyond the passage text, and query latency of
the Python reader. Absolute times are machine-bound; the ratios are the result.

    .venv/bin/python benchmarks/bench_build.py --site netbox --repeat 3
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
from pathlib import Path

import yaml
from mkdocs.utils.yaml import yaml_load

REPO = Path(__file__).resolve().parents[1]
SITES = {"netbox": REPO / "tests" / "corpora" / "netbox-docs", "example": REPO}
QUESTIONS = {
    "netbox": ["How do I configure LDAP authentication?", "What is a VRF?",
               "How do I back up the database before upgrading?", "rack elevations",
               "Which settings control the login timeout?", "How do webhooks work?",
               "What does the napalm integration do?", "How are prefixes nested?"],
    "example": ["Where does Teo live now?", "What is slotmeter?", "When did he move to Vienna?",
                "What talks has he given?", "tram clock", "Which employers came after Berlin?"],
}


def _prepare(site: str, workdir: Path, with_plugin: bool, cache_dir: Path) -> Path:
    source = SITES[site]
    target = workdir / ("plugin" if with_plugin else "plain")
    shutil.copytree(source / "docs", target / "docs")
    config = yaml_load((source / "mkdocs.yml").read_text(encoding="utf-8"))
    plugins = [p for p in config.get("plugins", []) if not (
        p == "site-knowledge" or (isinstance(p, dict) and "site-knowledge" in p))]
    if with_plugin:
        options = {"cache_dir": str(cache_dir), "chat": False}
        if site == "example":
            options["ontology"] = str(REPO / "ontology.py")
        plugins.append({"site-knowledge": options})
    config["plugins"] = plugins
    (target / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return target / "mkdocs.yml"


def _build(config_file: Path) -> float:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config_file),
                    "-d", str(config_file.parent / "site")], check=True, env=env,
                   capture_output=True)
    return time.perf_counter() - started


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    """Run the benchmark and print a JSON report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--site", choices=sorted(SITES), default="netbox")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plain = _prepare(args.site, work, False, work / "cache")
        with_plugin = _prepare(args.site, work, True, work / "cache")
        cold, warm, baseline = [], [], []
        for run in range(args.repeat):
            cache = work / f"cache-{run}"
            config = yaml.safe_load(with_plugin.read_text(encoding="utf-8"))
            config["plugins"][-1]["site-knowledge"]["cache_dir"] = str(cache)
            with_plugin.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
            baseline.append(_build(plain))
            cold.append(_build(with_plugin))
            warm.append(_build(with_plugin))
        artifact_path = with_plugin.parent / "site" / "assets" / "site-knowledge" / "site-knowledge.json"
        from site_knowledge.retrieval.artifact import load_artifact

        artifact, _ = load_artifact(artifact_path)
        passages = artifact["passages"]
        text_bytes = sum(len(p["text"].encode("utf-8")) for p in passages)
        sidecar = artifact_path.parent / artifact["vectors"]["file"]
        total = artifact_path.stat().st_size + sidecar.stat().st_size
        from site_knowledge.retrieval import load_index

        index = load_index(artifact_path)
        index.search("warm up the encoder")
        latencies = {}
        for mode in ("hybrid", "bm25", "dense"):
            times = []
            for _ in range(5):
                for question in QUESTIONS[args.site]:
                    started = time.perf_counter()
                    index.search(question, mode=mode)
                    times.append((time.perf_counter() - started) * 1000)
            latencies[mode] = {"p50_ms": round(_percentile(times, 0.5), 2),
                               "p95_ms": round(_percentile(times, 0.95), 2)}
    plain_s = statistics.median(baseline)
    report = {
        "site": args.site, "repeat": args.repeat, "passages": len(passages),
        "plain_build_s": round(plain_s, 2),
        "cold_build_s": round(statistics.median(cold), 2),
        "warm_build_s": round(statistics.median(warm), 2),
        "cold_ratio": round(statistics.median(cold) / plain_s, 2),
        "warm_ratio": round(statistics.median(warm) / plain_s, 2),
        "embedding_passages_per_s": round(len(passages) / max(statistics.median(cold) - plain_s, 1e-9), 1),
        "artifact_bytes_total": total,
        "bytes_per_passage_beyond_text": round((total - text_bytes) / len(passages), 1),
        "query_latency": latencies,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
