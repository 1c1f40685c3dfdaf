"""Every retrieval set on its site in one go: build the four sites, run the four evals, and
print (and write) one table.

    python -m evals.retrieval_sets                   # build into a temporary folder
    python -m evals.retrieval_sets --sites /tmp/sk   # build there (kept for the next run)
    python -m evals.retrieval_sets --sites /tmp/sk --reuse   # measure the sites already built

The battery runs on the example site, each corpus set on its corpus. Each set gets its
report (``retrieval-<set>.json`` / ``.md``) and the table goes to ``retrieval-sets.md``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.sites import REPO, SITES, build, build_arguments, parse_build_arguments
from site_knowledge.evals import report, retrieval_eval
from site_knowledge.evals.dataset import battery_dir, load_questions

EVALS = REPO / "evals"


@dataclass(frozen=True)
class EvalSet:
    """A question set and the site it asks about."""

    name: str
    site: str
    questions: Path


SETS: tuple[EvalSet, ...] = (
    EvalSet("battery-v1", "example", battery_dir() / "v1.jsonl"),
    EvalSet("battery-v2", "example", battery_dir() / "v2.jsonl"),
    EvalSet("netbox", "netbox", EVALS / "netbox" / "questions.jsonl"),
    EvalSet(
        "evaluationcontext-blog",
        "evaluationcontext-blog",
        EVALS / "evaluationcontext-blog" / "questions.jsonl",
    ),
    EvalSet("drf-docs", "drf-docs", EVALS / "drf-docs" / "questions.jsonl"),
)


def evaluate(eval_set: EvalSet, site_dir: Path) -> dict[str, Any]:
    """The retrieval report of one set on its built site."""
    questions = load_questions(eval_set.questions)
    results = retrieval_eval.run(site_dir, questions)
    variants = retrieval_eval.weight_variants(site_dir, questions)
    return retrieval_eval.report(
        site_dir, eval_set.questions, questions, results, eval_set.name, variants
    )


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}% ({int(part)}/{int(whole)})" if whole else "n/a"


def table(docs: dict[str, dict[str, Any]]) -> str:
    """One Markdown table: per set and mode, ranking and paraphrases; per set, the gate."""
    lines = [
        "| set | mode | recall@1 | recall@4 | recall@10 | MRR | paraphrase recall@4 "
        "| gate passes answerable | gate refuses off-topic/gibberish/injection |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, doc in docs.items():
        summary = doc["summary"]
        gate = summary["gate"]
        for n, mode in enumerate(retrieval_eval.MODES):
            m = summary["modes"][mode]
            r = m["ranking"]
            para = m["by_kind"].get("paraphrase")
            cells = [
                f"{name} ({int(r['questions'])} ranked)" if n == 0 else "",
                mode,
                *(f"{r.get(k, 0.0):.3f}" for k in ("recall@1", "recall@4", "recall@10", "mrr")),
                f"{para['recall@4']:.3f} ({int(para['questions'])})" if para else "n/a",
                _pct(gate["passed_in_scope"], gate["in_scope"]) if n == 0 else "",
                _pct(gate["refused_gated"], gate["gated"]) if n == 0 else "",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    thresholds = [
        f"{name}: min_coverage {d['configuration']['gate']['min_coverage']}, "
        f"min_cosine {d['configuration']['gate']['min_cosine']}, "
        f"strong_cosine {d['configuration']['gate']['strong_cosine']}, "
        f"min_margin {d['configuration']['gate'].get('min_margin', 'n/a')}; kept "
        f"{d['configuration'].get('calibration', {}).get('elsewhere_kept', 'n/a')} questions "
        "from elsewhere"
        for name, d in docs.items()
    ]
    return "\n".join([*lines, "", "Gate thresholds (calibrated by the compiler on each site):",
                      *(f"- {t}" for t in thresholds)]) + "\n"


def run(sites_dir: Path, names: Sequence[str], reuse: bool) -> dict[str, dict[str, Any]]:
    """Build (unless ``reuse``) and evaluate the named sets; their reports by set name."""
    docs: dict[str, dict[str, Any]] = {}
    built: dict[str, Path] = {}
    for eval_set in (s for s in SETS if s.name in names):
        site_dir = sites_dir / eval_set.site
        if eval_set.site not in built:
            if not reuse:
                started = time.perf_counter()
                build(SITES[eval_set.site], site_dir, chat=False)
                print(f"built {eval_set.site} in {time.perf_counter() - started:.0f} s", flush=True)
            built[eval_set.site] = site_dir
        docs[eval_set.name] = evaluate(eval_set, site_dir)
        print(f"evaluated {eval_set.name}", flush=True)
    return docs


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: build, evaluate, print the table and write the reports."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    build_arguments(parser)
    parser.add_argument("--only", action="append", choices=[s.name for s in SETS],
                        help="run only this set (repeatable)")
    parser.add_argument("--out", type=Path, default=None, help="report folder (default: evals/reports)")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parse_build_arguments(parser, argv)
    names = args.only or [s.name for s in SETS]
    with tempfile.TemporaryDirectory(prefix="sk-sets-") as scratch:
        docs = run(args.sites or Path(scratch), names, args.reuse)
    text = table(docs)
    print(text, end="")
    if not args.no_write:
        args.out = args.out or report.default_dir()
        for name, doc in docs.items():
            for path in report.write(doc, args.out, report.slug(f"retrieval-{name}")):
                print(f"wrote {path}")
        summary = args.out / "retrieval-sets.md"
        summary.write_text("# Retrieval sets\n\n" + text, encoding="utf-8")
        print(f"wrote {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
