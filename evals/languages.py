"""Retrieval per language on a site in several: recall@4 and MRR per mode, with and without the
question's language, for the FastAPI question sets (``evals/fastapi-<lang>/questions.jsonl``).

``python -m evals.languages SITE_DIR --label after --out FILE.json`` measures one built site with
the code importable here. Run from a copy of an older ``site_knowledge`` (``cd OLD && PYTHONPATH=
REPO python -m evals.languages ...``) to measure the code before a change: a reader without
languages is measured without them. ``--report A.json B.json ... --md FILE.md`` tabulates runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from site_knowledge.evals.dataset import RetrievalQuestion
from site_knowledge.evals.retrieval_eval import MODES, run, summarise

REPO = Path(__file__).resolve().parent.parent
LANGUAGES = ("en", "zh", "es")


def questions(lang: str, keep_lang: bool) -> list[RetrievalQuestion]:
    """One language's questions, told their language only when ``keep_lang`` (and the reader
    has the field)."""
    knows = "lang" in {f.name for f in dataclasses.fields(RetrievalQuestion)}
    out = []
    path = REPO / "evals" / f"fastapi-{lang}" / "questions.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        extra = {"lang": raw["lang"]} if keep_lang and knows else {}
        out.append(RetrievalQuestion(raw["id"], raw["question"], tuple(raw["expected"]),
                                     raw["kind"], **extra))
    return out


def measure(site: Path) -> dict[str, Any]:
    """Per language, per restriction, per mode: the open-gate ranking and the gate's pass rate."""
    from site_knowledge.retrieval.tokenizer import TOKENIZER_VERSION

    knows = "lang" in {f.name for f in dataclasses.fields(RetrievalQuestion)}
    out: dict[str, Any] = {"tokenizer": TOKENIZER_VERSION, "languages": {}}
    for lang in LANGUAGES:
        by_scope: dict[str, Any] = {}
        for scope in (("all", "kept to its language") if knows else ("all",)):
            summary = summarise(run(site, questions(lang, scope != "all")))
            by_scope[scope] = {
                "pass_rate": summary["gate"]["pass_rate_answerable"],
                **{mode: {k: summary["modes"][mode]["ranking"][k] for k in ("recall@4", "mrr")}
                   for mode in MODES},
            }
        out["languages"][lang] = by_scope
    return out


def table(runs: dict[str, dict[str, Any]]) -> str:
    """A Markdown table: one row per run, language and scope; recall@4 (MRR) per mode."""
    rows = ["| run | tokenizer | language | search | BM25 | dense | hybrid | gate passes |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for label, data in runs.items():
        for lang, scopes in data["languages"].items():
            for scope, m in scopes.items():
                cells = [f"{m[mode]['recall@4']:.3f} ({m[mode]['mrr']:.3f})" for mode in MODES]
                rows.append(f"| {label} | {data['tokenizer']} | {lang} | {scope} | "
                            f"{' | '.join(cells)} | {m['pass_rate']:.2f} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", type=Path, help="the built site folder")
    parser.add_argument("--label", default="run")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--report", nargs="+", type=Path, help="run files to tabulate")
    parser.add_argument("--md", type=Path, help="write the table here")
    args = parser.parse_args()
    if args.report:
        runs = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in args.report}
        text = table(runs)
        if args.md:
            args.md.write_text(text, encoding="utf-8")
        print(text)
        return
    if args.site is None or args.out is None:
        parser.error("give SITE_DIR and --out, or --report")
    result = {"label": args.label, **measure(args.site)}
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(table({args.label: result}))


if __name__ == "__main__":
    main()
