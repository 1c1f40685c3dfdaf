"""What the example site weighs once built, for each choice of the chat box's engines.

Each row is a fresh ``mkdocs build`` of the repository's example site with the
plugin's ``engines`` (and, for WebLLM, ``webllm_url``) set as named, into a temporary folder;
it reports the whole built site, the chat box's share (``site/assets/site-knowledge/``, the
artifact included) and the largest file (GitHub refuses a pushed file over 100 MB and warns over
50 MB; MB here are MiB, as in the build's summary line and GitHub's messages). Prints a Markdown table.

    .venv/bin/python -m benchmarks.bench_site_size
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path
from typing import Any

from evals.sites import SITES, build

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


def mb(count: int) -> str:
    """MB as the build's summary line and GitHub count them (MiB)."""
    return f"{count / 1048576:.1f} MB"


def main() -> None:
    argparse.ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    print(f"| engines | built site | chat box (`{ASSETS}/`) | largest file |")
    print("|---|---|---|---|")
    for label, options in VARIANTS.items():
        with tempfile.TemporaryDirectory(prefix="sk-size-") as tmp:
            site = build(SITES["example"], Path(tmp) / "site", **options)
            files = [p for p in site.rglob("*") if p.is_file()]
            box = sum(p.stat().st_size for p in (site / ASSETS).rglob("*")
                      if p.is_file())
            largest = max(files, key=lambda p: p.stat().st_size)
            name = re.sub(r"-[0-9a-f]{12}-", "-…-", largest.name)
            print(f"| {label} | {mb(sum(p.stat().st_size for p in files))} | {mb(box)} | "
                  f"{mb(largest.stat().st_size)} (`{name}`) |", flush=True)


if __name__ == "__main__":
    main()
