"""The answer sets end to end on every site: build, serve, ask, score, one table.

For each site (the example site with the current battery, each corpus with its
``evals/<set>/answers.jsonl``) this builds the site with the plugin, starts the whole local
stack (``site-knowledge serve``: llama-server with the model preset and the gateway), runs
``site-knowledge eval --engine gateway`` against it (the constant-refusal and gate-only
baselines are scored on the same items), stops the stack, and finally prints the table across
sites (``site-knowledge eval --table``) from the reports it wrote::

    .venv/bin/python -m evals.answer_sets --sites /tmp/sk            # every site
    .venv/bin/python -m evals.answer_sets --sites /tmp/sk --reuse --site netbox
    .venv/bin/python -m evals.answer_sets --preset qwen2.5-coder-0.5b --only lookup

Reports land in ``evals/reports/`` (``--out``), one JSON and one Markdown file per site.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from evals.sites import REPO, SITES, build, build_arguments, parse_build_arguments
from site_knowledge.evals.report import slug
from site_knowledge.llama.cpu import REPACK_CHOICES

BIN = Path(sys.executable).parent
READY_TIMEOUT_S = 900.0
"""How long llama-server may take to load the model and the gateway to prime its prompt."""


@dataclass(frozen=True)
class AnswerSet:
    """A site and the graded items asked of it (None: the package's current battery)."""

    site: str
    battery: Path | None


ANSWER_SETS: dict[str, AnswerSet] = {
    "example": AnswerSet("example", None),
    "netbox": AnswerSet("netbox", REPO / "evals" / "netbox" / "answers.jsonl"),
    "drf-docs": AnswerSet("drf-docs", REPO / "evals" / "drf-docs" / "answers.jsonl"),
    "evaluationcontext-blog": AnswerSet(
        "evaluationcontext-blog", REPO / "evals" / "evaluationcontext-blog" / "answers.jsonl"
    ),
    "fastapi-docs": AnswerSet("fastapi-docs", REPO / "evals" / "fastapi-docs" / "answers.jsonl"),
}


Row = TypeVar("Row")


def per_site_main(doc: str, rows_of: Callable[[Path, str], Sequence[Row]],
                  table: Callable[[Sequence[Row]], str], argv: Sequence[str] | None = None) -> int:
    """The command line of a model-free check over the answer sets: build (or reuse) each
    site, collect ``rows_of(site_dir, name)``, print ``table`` of them (``--out``: also
    write it as Markdown)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    build_arguments(parser)
    parser.add_argument("--site", choices=sorted(ANSWER_SETS), action="append",
                        help="this site only (repeatable; default: all)")
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = parse_build_arguments(parser, argv)
    if not args.sites:
        parser.error("--sites DIR is required (the built sites are kept there)")
    rows: list[Row] = []
    for name in args.site or list(ANSWER_SETS):
        site_dir = args.sites / name
        if not args.reuse:
            build(SITES[name], site_dir, chat=False)
        rows += rows_of(site_dir, name)
    text = table(rows)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
            health = json.loads(response.read())
    except (OSError, ValueError):
        return False
    return health.get("status") == "ok" and health.get("warmup") in ("done", "yielded", "failed")


@contextmanager
def serving(site_dir: Path, preset: str, gateway_port: int, repack: str = "auto"
            ) -> Iterator[str]:
    """``site-knowledge serve`` on the built site until the block ends; yields the gateway's
    URL once it is ready and its system prompt is primed."""
    command = [str(BIN / "site-knowledge"), "serve", str(site_dir), "--mode", "public",
               "--model-preset", preset, "--gateway-port", str(gateway_port),
               "--llama-port", str(gateway_port + 1), "--port", str(gateway_port + 2),
               "--repack", repack]
    process = subprocess.Popen(command, start_new_session=True)
    url = f"http://127.0.0.1:{gateway_port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not _ready(url):
            if process.poll() is not None:
                raise SystemExit(f"site-knowledge serve exited with {process.returncode}")
            if time.monotonic() > deadline:
                raise SystemExit(f"the stack was not ready within {READY_TIMEOUT_S:.0f} s")
            time.sleep(2)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def ask(answer_set: AnswerSet, site_dir: Path, url: str, label: str, out: Path,
        only: Sequence[str]) -> None:
    """``site-knowledge eval --engine gateway`` for one answer set."""
    command = [str(BIN / "site-knowledge"), "eval", "--engine", "gateway", "--url", url,
               "--site", str(site_dir), "--label", label, "--out", str(out)]
    if answer_set.battery is not None:
        command += ["--battery", str(answer_set.battery)]
    for name in only:
        command += ["--only", name]
    subprocess.run(command, check=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--site", choices=sorted(ANSWER_SETS), action="append",
                        help="only these sites (repeatable; default: all five)")
    build_arguments(parser)
    parser.add_argument("--preset", default="qwen2.5-coder-1.5b", help="model preset")
    parser.add_argument("--only", action="append", default=[],
                        help="only these categories or ids (repeatable)")
    parser.add_argument("--port", type=int, default=8790, help="gateway port (+1 llama, +2 site)")
    parser.add_argument("--repack", choices=REPACK_CHOICES, default="auto",
                        help="llama-server's weight repacking, as `serve --repack`")
    parser.add_argument("--label", default="", help="a suffix for the reports' label")
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports")
    args = parse_build_arguments(parser, argv)
    names = args.site or list(ANSWER_SETS)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.sites or Path(tmp)
        for name in names:
            answer_set = ANSWER_SETS[name]
            site_dir = root / answer_set.site
            if not args.reuse:
                build(SITES[answer_set.site], site_dir, chat=False)
            label = f"{name}-{args.preset}" + (f"-{args.label}" if args.label else "")
            with serving(site_dir, args.preset, args.port, args.repack) as url:
                ask(answer_set, site_dir, url, label, args.out, args.only)
            written.append(max(args.out.glob(f"battery-*-{slug(label)}-*.json"),
                               key=lambda p: p.stat().st_mtime))
    subprocess.run([str(BIN / "site-knowledge"), "eval", "--table", *map(str, written)],
                   check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
