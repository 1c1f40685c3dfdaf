"""``site-knowledge eval``: the graded battery, its baselines, rescoring, the retrieval eval
and report comparison.

Everything here ships in ``site_knowledge.evals``, the batteries (v1, v2: questions about the
example site) included. The retrieval eval reads your own question set (``--questions``: one
``{id, question, expected, kind, history?}`` object a line, ``expected`` the page paths or
ontology source ids that answer it) or, by default, the current shipped battery. Only the
browser engine needs a checkout (its driver, node modules and Chromium come with
``scripts/setup.sh``).

Examples::

    site-knowledge eval --engine gateway --url http://127.0.0.1:8787 --site site/
    site-knowledge eval --engine llama --url http://127.0.0.1:8080 --site site/
    site-knowledge eval --engine gate-only --site site/ --battery v1
    site-knowledge eval --rescore evals/reports/A.json --site site/
    site-knowledge eval --retrieval site/ --questions my-questions.jsonl
    site-knowledge eval --retrieval example-site/ --questions v1
    site-knowledge eval --compare A.json B.json
    site-knowledge eval --table evals/reports/battery-answers-*.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from site_knowledge.evals.engines import Engine
    from site_knowledge.evals.site import SiteIndex

ENGINES = ("gateway", "llama", "browser", "constant-refusal", "gate-only")


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
        choices=ENGINES,
        help="run the battery against this engine (or one of the baselines)",
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
        help="score a battery report's stored answers again (its battery version, the current scorer)",
    )
    what.add_argument(
        "--table",
        type=Path,
        nargs="+",
        metavar="REPORT.json",
        help="print one Markdown table across battery reports (one row per site)",
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
        help="built site folder or artifact (URL and citation checks, private claims, the gate-only "
        "baseline; needed by the llama, browser and gate-only engines)",
    )
    p.add_argument("--battery", help="battery version (v1, v2) or file (default: the current version)")
    p.add_argument(
        "--questions",
        help="retrieval questions: a JSON lines file, or a shipped battery version (v1, v2) "
        "(default: the current battery, which asks about the example site)",
    )
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
    p.add_argument(
        "--out",
        type=Path,
        help="report folder (default: evals/reports in a checkout, else the current folder)",
    )
    p.add_argument("--no-write", action="store_true", help="print the summary only")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Dispatch ``site-knowledge eval``; returns the exit status.

    Raises:
        SystemExit: a battery or question set is missing or malformed (the message names
            the file and the line).
    """
    from site_knowledge.evals.dataset import DatasetError

    try:
        return _dispatch(args)
    except DatasetError as exc:
        raise SystemExit(f"site-knowledge eval: {exc}") from None


def _dispatch(args: argparse.Namespace) -> int:
    from site_knowledge.evals import report

    out = args.out or report.default_dir()
    if args.table:
        print(report.table([report.load(path) for path in args.table]), end="")
        return 0
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
    from site_knowledge.evals import report, retrieval_eval
    from site_knowledge.evals.dataset import battery_path, load_questions

    path = battery_path(args.questions)
    questions = load_questions(path)
    results = retrieval_eval.run(args.retrieval, questions)
    label = args.label or path.stem
    variants = retrieval_eval.weight_variants(args.retrieval, questions)
    doc = retrieval_eval.report(args.retrieval, path, questions, results, label, variants)
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


def _engine(args: argparse.Namespace, site: SiteIndex | None) -> Engine:
    from site_knowledge.evals.baselines import ConstantRefusal, GateOnly
    from site_knowledge.evals.engines import BrowserEngine, GatewayEngine, LlamaEngine

    if args.engine == "gateway":
        return GatewayEngine(args.url or "http://127.0.0.1:8787", args.token)
    if args.engine == "constant-refusal":
        return ConstantRefusal()
    if args.site is None or site is None or site.index is None:
        raise SystemExit(f"eval --engine {args.engine} needs --site")
    if args.engine == "gate-only":
        return GateOnly(site.index)
    if args.engine == "llama":
        return LlamaEngine(args.url or "http://127.0.0.1:8080", args.site)
    try:
        return BrowserEngine(args.site, args.browser_engines)
    except RuntimeError as exc:
        raise SystemExit(f"eval --engine browser: {exc}") from None


def _print_summary(doc: dict[str, Any]) -> None:
    s = doc["summary"]
    print(f"score {s['score']}/{s['max_score']} ({s['percent']:.1f}%)")
    for name, base in doc["baselines"].items():
        print(f"  baseline {name:16s} {base['score']}/{base['max_score']} ({base['percent']:.1f}%)")
    for category, v in s["by_category"].items():
        print(f"  {category:16s} {v['score']}/{v['max_score']}")


def _battery(args: argparse.Namespace, out: Path) -> int:
    from site_knowledge.evals import report, runner
    from site_knowledge.evals.dataset import load_battery
    from site_knowledge.evals.site import SiteIndex

    battery = load_battery(args.battery)
    items = [i for i in battery.items if not args.only or i.category in args.only or i.id in args.only]
    site = SiteIndex.load(args.site) if args.site else None
    engine = _engine(args, site)
    baselines = runner.run_baselines(items, site)
    info = engine.info()
    health = info.get("healthz", {}) if isinstance(info.get("healthz"), dict) else {}
    served_raw = health.get("model")
    served: dict[str, Any] = served_raw if isinstance(served_raw, dict) else {}
    model = runner.model_identity(
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
        return runner.document(
            battery,
            engine.name,
            site,
            done,
            label=label,
            model=model,
            configuration=configuration,
            wall_s=time.perf_counter() - started,
            baselines=baselines,
            judged=judged,
            planned=len(items),
        )

    def progress(item: Any, answer: Any, score: Any) -> None:
        done.append((item, answer, score))
        print(f"{item.id:24s} {score.score}/{score.max_score} {'; '.join(score.notes)}", flush=True)
        if not args.no_write:  # a run cut short still leaves its report, marked incomplete
            report.write(build(), out, stem)

    runner.run(items, engine, site, progress)
    wall = time.perf_counter() - started
    configuration["rate_limit_wait_s"] = round(float(getattr(engine, "waited_s", 0.0)), 1)
    if hasattr(engine, "close"):
        engine.close()
    judged = (
        {s.id: runner.judge(args.judge, item, answer) for item, answer, s in done} if args.judge else None
    )
    doc = build(judged)
    doc["wall_s"] = round(wall, 1)
    _print_summary(doc)
    print(f"wall {wall:.0f} s")
    if not args.no_write:
        for path in report.write(doc, out, stem):
            print(f"wrote {path}")
    return 0


def _rescore(args: argparse.Namespace, out: Path) -> int:
    from site_knowledge.evals import report, runner
    from site_knowledge.evals.dataset import load_battery
    from site_knowledge.evals.scorer import score_answer
    from site_knowledge.evals.site import SiteIndex

    old = report.load(args.rescore)
    battery = load_battery(args.battery or old["dataset"]["version"])
    site_path = args.site or (Path(old["artifact"]["path"]) if old["artifact"].get("path") else None)
    site = SiteIndex.load(site_path) if site_path else None
    if site is not None and old["artifact"].get("sha256") not in (None, site.sha256):
        print(f"warning: {site.path} is not the artifact the answers came from", file=sys.stderr)
    answers = runner.stored_answers(old)
    items = [item for item in battery.items if item.id in answers]
    results = [(item, answers[item.id], score_answer(item, answers[item.id], site)) for item in items]
    configuration = {**old["configuration"], "rescored_from": args.rescore.name}
    doc = runner.document(
        battery,
        str(old["engine"]),
        site,
        results,
        label=old["label"],
        model=old["model"],
        configuration=configuration,
        wall_s=float(old.get("wall_s", 0.0)),
        baselines=runner.run_baselines(items, site),
        planned=old.get("planned"),
    )
    doc["date"] = old["date"]
    doc["latency_ms"] = old["latency_ms"]
    doc["rescored_with_artifact"] = doc["artifact"]
    doc["artifact"] = old["artifact"]
    doc["rescored_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    previous = old.get("previous_score") or old["summary"]
    doc["previous_score"] = {"score": previous["score"], "max_score": previous["max_score"]}
    _print_summary(doc)
    print(f"was {previous['score']}/{previous['max_score']}")
    if not args.no_write:
        for path in report.write(doc, out, args.rescore.stem):
            print(f"wrote {path}")
    return 0
