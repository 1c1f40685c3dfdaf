"""``site-knowledge eval``: the graded battery, the retrieval eval and report comparison.

The eval code lives in the repository's ``evals/`` package (a development checkout); this
module only wires its commands into the CLI.

Examples::

    site-knowledge eval --engine gateway --url http://127.0.0.1:8787 --site site/
    site-knowledge eval --engine llama --url http://127.0.0.1:8080 --site site/
    site-knowledge eval --retrieval site/ --questions evals/netbox/questions.jsonl
    site-knowledge eval --compare A.json B.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evals.engines import Engine

_REPO = Path(__file__).resolve().parent.parent


def _import_evals() -> None:
    """Make the checkout's ``evals`` package importable when run from the console script."""
    if (_REPO / "evals" / "__init__.py").is_file() and str(_REPO) not in sys.path:
        sys.path.insert(0, str(_REPO))


def register(subparsers: Any) -> None:
    """Add the ``eval`` subcommand to the CLI's subparsers.

    Args:
        subparsers: the object ``ArgumentParser.add_subparsers()`` returned.
    """
    p: argparse.ArgumentParser = subparsers.add_parser(
        "eval",
        help="run the graded battery or the retrieval eval; compare reports",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--engine",
        choices=("gateway", "llama", "browser"),
        help="run the battery against this engine",
    )
    what.add_argument(
        "--retrieval",
        type=Path,
        metavar="SITE_OR_ARTIFACT",
        help="run the retrieval eval on a built site or artifact",
    )
    what.add_argument(
        "--rescore",
        type=Path,
        metavar="REPORT.json",
        help="score a battery report's stored answers again (current battery and scorer)",
    )
    what.add_argument(
        "--compare",
        type=Path,
        nargs=2,
        metavar=("A.json", "B.json"),
        help="print a comparison table of two reports",
    )
    p.add_argument("--url", help="gateway or llama-server base URL")
    p.add_argument("--token", help="bearer token for the gateway")
    p.add_argument(
        "--site",
        type=Path,
        help="built site folder or artifact (URL checks; the llama and browser engines)",
    )
    p.add_argument("--battery", type=Path, help="battery file (default: evals/battery/VERSION)")
    p.add_argument("--questions", type=Path, help="retrieval questions (JSON lines)")
    p.add_argument(
        "--only", action="append", default=[], help="run only these categories or ids (repeatable)"
    )
    p.add_argument("--model", type=Path, help="GGUF file, for the report's model SHA-256")
    p.add_argument("--model-name", help="model name for the report")
    p.add_argument("--model-sha256", help="model SHA-256 for the report")
    p.add_argument(
        "--judge",
        metavar="LLAMA_URL",
        help="also ask this llama-server for a model-as-judge opinion (never the score)",
    )
    p.add_argument(
        "--browser-engines",
        default="wllama",
        help="engines the browser box may use, comma-separated (default: wllama)",
    )
    p.add_argument("--label", help="report label (default: engine or questions file)")
    p.add_argument("--note", default="", help="free text recorded in the report's configuration")
    p.add_argument("--out", type=Path, help="report folder (default: evals/reports)")
    p.add_argument("--no-write", action="store_true", help="print the summary only")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Dispatch ``site-knowledge eval``; returns the exit status."""
    _import_evals()
    from evals import report

    out = args.out or report.REPORTS_DIR
    if args.compare:
        a, b = (report.load(path) for path in args.compare)
        print(report.compare(a, b), end="")
        return 0
    if args.retrieval:
        return _retrieval(args, out)
    if args.rescore:
        return _rescore(args, out)
    return _battery(args, out)


def _retrieval(args: argparse.Namespace, out: Path) -> int:
    from evals import report, retrieval_eval
    from evals.dataset import load_questions

    if not args.questions:
        print("eval --retrieval needs --questions FILE", file=sys.stderr)
        return 2
    questions = load_questions(args.questions)
    results = retrieval_eval.run(args.retrieval, questions)
    label = args.label or args.questions.stem
    variants = retrieval_eval.weight_variants(args.retrieval, questions)
    doc = retrieval_eval.report(args.retrieval, args.questions, questions, results, label, variants)
    for mode, m in doc["summary"]["modes"].items():
        r = m["ranking"]
        print(
            f"{mode:7s} recall@1 {r['recall@1']:.3f}  @4 {r['recall@4']:.3f}  "
            f"@10 {r['recall@10']:.3f}  MRR {r['mrr']:.3f}"
        )
    gate = doc["summary"]["gate"]
    print(
        f"gate    pass P/R {gate['pass_precision']:.3f}/{gate['pass_recall']:.3f}  "
        f"refuse P/R {gate['refuse_precision']:.3f}/{gate['refuse_recall']:.3f}"
    )
    for finding in doc["findings"]:
        print(f"- {finding}")
    if not args.no_write:
        stem = report.slug(f"retrieval-{label}")
        for path in report.write(doc, out, stem):
            print(f"wrote {path}")
    return 0


def _engine(args: argparse.Namespace) -> Engine:
    from evals.engines import BrowserEngine, GatewayEngine, LlamaEngine

    if args.engine == "gateway":
        return GatewayEngine(args.url or "http://127.0.0.1:8787", args.token)
    if args.site is None:
        raise SystemExit(f"eval --engine {args.engine} needs --site")
    if args.engine == "llama":
        return LlamaEngine(args.url or "http://127.0.0.1:8080", args.site)
    return BrowserEngine(args.site, args.browser_engines)


def _battery(args: argparse.Namespace, out: Path) -> int:
    from evals import battery_run, report
    from evals.artifact import SiteIndex
    from evals.dataset import load_battery

    battery = load_battery(args.battery)
    items = [i for i in battery.items if not args.only or i.category in args.only or i.id in args.only]
    site = SiteIndex.load(args.site) if args.site else None
    engine = _engine(args)
    info = engine.info()
    health = info.get("healthz", {}) if isinstance(info.get("healthz"), dict) else {}
    served_raw = health.get("model")
    served: dict[str, Any] = served_raw if isinstance(served_raw, dict) else {}
    model = battery_run.model_identity(
        args.model,
        args.model_name or served.get("name") or info.get("model_path"),
        args.model_sha256 or served.get("sha256"),
    )
    label = args.label or args.engine
    stem = report.slug(f"battery-{battery.version}-{label}-{time.strftime('%Y-%m-%d')}")
    configuration: dict[str, Any] = {
        "engine": info,
        "only": args.only,
        "judge": args.judge,
        "note": args.note,
    }
    started = time.perf_counter()
    done: list[Any] = []

    def build(judged: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        return battery_run.document(
            battery,
            engine.name,
            site,
            done,
            label=label,
            model=model,
            configuration=configuration,
            wall_s=time.perf_counter() - started,
            judged=judged,
            planned=len(items),
        )

    def progress(item: Any, answer: Any, score: Any) -> None:
        done.append((item, answer, score))
        print(f"{item.id:24s} {score.score}/{score.max_score} {'; '.join(score.notes)}", flush=True)
        if not args.no_write:  # a run cut short still leaves its report, marked incomplete
            report.write(build(), out, stem)

    battery_run.run(battery, engine, site, items, progress)
    wall = time.perf_counter() - started
    configuration["rate_limit_wait_s"] = round(float(getattr(engine, "waited_s", 0.0)), 1)
    if hasattr(engine, "close"):
        engine.close()
    judged = (
        {s.id: battery_run.judge(args.judge, item, answer) for item, answer, s in done}
        if args.judge
        else None
    )
    doc = build(judged)
    doc["wall_s"] = round(wall, 1)
    s = doc["summary"]
    print(f"score {s['score']}/{s['max_score']} ({s['percent']:.1f}%) in {wall:.0f} s")
    for category, v in s["by_category"].items():
        print(f"  {category:16s} {v['score']}/{v['max_score']}")
    if not args.no_write:
        for path in report.write(doc, out, stem):
            print(f"wrote {path}")
    return 0


def _rescore(args: argparse.Namespace, out: Path) -> int:
    from evals import battery_run, report
    from evals.artifact import SiteIndex
    from evals.dataset import load_battery
    from evals.scorer import score_answer

    old = report.load(args.rescore)
    battery = load_battery(args.battery)
    site_path = args.site or (Path(old["artifact"]["path"]) if old["artifact"].get("path") else None)
    site = SiteIndex.load(site_path) if site_path else None
    if site is not None and old["artifact"].get("sha256") not in (None, site.sha256):
        print(f"warning: {site.path} is not the artifact the answers came from", file=sys.stderr)
    answers = battery_run.stored_answers(old)
    results = [
        (item, answers[item.id], score_answer(item, answers[item.id], site))
        for item in battery.items
        if item.id in answers
    ]

    configuration = {**old["configuration"], "rescored_from": args.rescore.name}
    doc = battery_run.document(
        battery,
        str(old["engine"]),
        site,
        results,
        label=old["label"],
        model=old["model"],
        configuration=configuration,
        wall_s=float(old.get("wall_s", 0.0)),
        planned=old.get("planned"),
    )
    doc["date"] = old["date"]
    doc["rescored_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    s = doc["summary"]
    print(f"score {s['score']}/{s['max_score']} ({s['percent']:.1f}%), was {old['summary']['score']}")
    if not args.no_write:
        for path in report.write(doc, out, args.rescore.stem):
            print(f"wrote {path}")
    return 0
