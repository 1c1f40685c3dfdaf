"""``site-knowledge report``: the content-gap report, and the gateway's flags that keep it.

The gateway (``gateway`` and ``serve``) counts in ``--state-dir`` (``gaps.Ledger``); the
report reads the same folder and prints, for the last days, the questions refused by the
gate, declined by the grounding and voted down, by day and by the nearest page or section.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from .gaps import COUNTS_FILE, Ledger, default_state_dir, kept_questions


def add_ledger_flags(parser: argparse.ArgumentParser) -> None:
    """``--state-dir`` and ``--keep-questions`` for ``gateway`` and ``serve``."""
    parser.add_argument("--state-dir", type=Path, default=None, metavar="DIR",
                        help="where the content-gap counts are kept (default "
                             f"{default_state_dir()}); `site-knowledge report` reads them")
    parser.add_argument("--keep-questions", type=int, default=None, metavar="DAYS",
                        help="also keep the text of refused and declined questions in the "
                             "state folder for DAYS days, then delete it (off by default: "
                             "only counts per page are kept)")


def ledger_from(args: argparse.Namespace) -> Ledger:
    """The ledger the flags ask for."""
    if args.keep_questions is not None and args.keep_questions < 1:
        raise SystemExit("error: --keep-questions needs at least 1 day")
    return Ledger(args.state_dir or default_state_dir(), args.keep_questions)


def register(subparsers: Any) -> None:
    """Add ``report`` to an ``argparse`` subparsers object."""
    report = subparsers.add_parser(
        "report", help="print the content-gap report the gateway keeps",
        description="Questions refused by the gate, declined by the grounding and voted "
                    "down, per day and per nearest page or section; votes per cited page.",
    )
    report.add_argument("--state-dir", type=Path, default=None, metavar="DIR",
                        help=f"the gateway's state folder (default {default_state_dir()})")
    report.add_argument("--days", type=int, default=30, help="how many days back (default 30)")
    report.add_argument("--top", type=int, default=20, help="places listed (default 20)")
    report.add_argument("--json", action="store_true", help="print the summary as JSON")
    report.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    directory: Path = args.state_dir or default_state_dir()
    if not (directory / COUNTS_FILE).exists():
        print(f"no content-gap counts in {directory} yet (the gateway writes them there)")
        return 1
    summary = Ledger(directory, keep_questions_days=None, clock=time.time, prune=False
                     ).summary(args.days)
    kept = kept_questions(directory, time.time())
    if args.json:
        print(json.dumps({**summary, "kept_questions": kept}, indent=1, ensure_ascii=False))
        return 0
    print(render(summary, kept, args.days, args.top))
    return 0


def render(summary: dict[str, Any], kept: list[dict[str, Any]], days: int, top: int) -> str:
    """The report as text: totals per day, then the places with the most gaps."""
    lines = [f"Content gaps, last {days} days", "",
             f"{'day':<12}{'refused':>9}{'declined':>10}{'voted down':>12}{'voted up':>10}"]
    for day, n in summary["days"].items():
        lines.append(f"{day:<12}{n['refused']:>9}{n['declined']:>10}{n['down']:>12}{n['up']:>10}")
    if not summary["days"]:
        lines.append("(nothing counted)")
    lines += ["", f"{'refused':>7}{'declined':>10}{'down':>6}{'up':>5}  place"]
    for place in summary["places"][:top]:
        label = place["label"] if len(place["label"]) <= 48 else place["label"][:47] + "…"
        lines.append(f"{place['refused']:>7}{place['declined']:>10}{place['down']:>6}"
                     f"{place['up']:>5}  {label}  ({place['url'] or '/'})")
    if kept:
        lines += ["", f"Kept questions ({len(kept)}, each deleted when its time is up):"]
        for q in kept:
            day = time.strftime("%Y-%m-%d", time.gmtime(q["at"]))
            lines.append(f"  {day}  {q['kind']:<8}  {q['url'] or '/'}  {q['question']}")
    return "\n".join(lines)
