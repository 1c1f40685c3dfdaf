"""What the example site weighs once built, for each choice of the chat box's engines.

Each row is a fresh ``python -m mkdocs build`` of the repository's example site with the
plugin's ``engines`` (and, for WebLLM, ``webllm_url``) set as named, into a temporary folder;
it reports the whole built site, the chat box's share (``site/assets/site-knowledge/``, the
artifact included) and the largest file (GitHub refuses a pushed file over 100 MB and warns over
50 MB; MB here are MiB, as in the build's summary line and GitHub's messages). Prints a Markdown table.

    .venv/bin/python benchmarks/bench_site_size.py
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from mkdocs.utils.yaml import yaml_load

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "homepage"
ASSETS = "assets/site-knowledge"
HOSTED = "https://models.example.org/mlc/"  # WebLLM's weights self-hosted elsewhere
VARIANTS: dict[str, dict[str, Any]] = {
    "default: gateway, webllm, wllama, search": {},
    "default with `webllm_url` set": {"webllm_url": HOSTED},
    "without wllama (`webllm_url` set)": {"engines": ["gateway", "webllm", "search"],
                                          "webllm_url": HOSTED},
    "without webllm": {"engines": ["gateway", "wllama", "search"]},
    "search only: gateway, search": {"engines": ["gateway", "search"]},
}


def build(workdir: Path, options: dict[str, Any]) -> Path:
    """The example site built with the plugin's options updated by ``options``."""
    for name in ("docs", "ontology.py"):
        src = EXAMPLE / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, workdir / name)
    config = yaml_load((EXAMPLE / "mkdocs.yml").read_text(encoding="utf-8"))
    for i, plugin in enumerate(config["plugins"]):
        if isinstance(plugin, dict) and "site-knowledge" in plugin:
            config["plugins"][i] = {"site-knowledge": {**plugin["site-knowledge"], **options}}
    (workdir / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    site = workdir / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)], cwd=workdir,
                   env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, check=True, timeout=900)
    return site


def mb(count: int) -> str:
    """MB as the build's summary line and GitHub count them (MiB)."""
    return f"{count / 1048576:.1f} MB"


def main() -> None:
    print(f"| engines | built site | chat box (`{ASSETS}/`) | largest file |")
    print("|---|---|---|---|")
    for label, options in VARIANTS.items():
        with tempfile.TemporaryDirectory(prefix="sk-size-") as tmp:
            site = build(Path(tmp), options)
            files = [p for p in site.rglob("*") if p.is_file()]
            box = sum(p.stat().st_size for p in (site / ASSETS).rglob("*")
                      if p.is_file())
            largest = max(files, key=lambda p: p.stat().st_size)
            name = re.sub(r"-[0-9a-f]{12}-", "-…-", largest.name)
            print(f"| {label} | {mb(sum(p.stat().st_size for p in files))} | {mb(box)} | "
                  f"{mb(largest.stat().st_size)} (`{name}`) |", flush=True)


if __name__ == "__main__":
    main()
