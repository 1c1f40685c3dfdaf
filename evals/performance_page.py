"""Write ``docs/performance.md``: the current figures, read from the newest report of each kind
in ``evals/reports/``.

A kind is what one table row measures: the default model's answers on one site (an answer
set, or battery v2 on the example), battery v2 on the example through one engine and model,
the retrieval eval of one question set. Older reports of a kind are history and stay out of
the page. The tables are the ones the eval tools print (``site-knowledge eval --table``,
``python -m evals.retrieval_sets``), so the page and the tools cannot disagree.

    .venv/bin/python -m evals.performance_page            # rewrite docs/performance.md
    .venv/bin/python -m evals.performance_page --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

from evals.retrieval_sets import table as retrieval_table
from evals.sites import REPO
from site_knowledge.evals import report
from site_knowledge.llama.presets import DEFAULT_PRESET, preset

REPORTS = REPO / "evals" / "reports"
PAGE = REPO / "docs" / "performance.md"

Report = tuple[Path, dict[str, Any]]

SELECTED_BY: dict[str, tuple[str, ...]] = {
    "battery": ("date", "engine", "dataset.version", "model", "artifact.site"),
    "retrieval": ("date", "dataset.file"),
}
"""The fields that pick the newest report of a kind, read in every report of these kinds
(other kinds, such as routing, are not on the page)."""

SHOWN: dict[str, tuple[str, ...]] = {
    "battery": ("label", "summary.percent", "questions"),
    "retrieval": ("label", "summary.modes.bm25.ranking", "summary.modes.dense.ranking",
                  "summary.modes.hybrid.ranking", "summary.gate.in_scope",
                  "summary.gate.passed_in_scope", "summary.gate.gated",
                  "summary.gate.refused_gated", "configuration.gate"),
}
"""The fields the tables read, checked in the reports the page shows (older reports of a
kind may predate some of them)."""

INTRO = """\
# Performance

<!-- Written by `.venv/bin/python -m evals.performance_page` from evals/reports/; do not edit. -->

The current figures only: each row is the newest report of its kind in `evals/reports/`
(older reports are history, kept there and in git). Every score stands beside its baselines,
scored on the same items: the **constant refusal** ("The site doesn't say." to every
question) and the **gate only** (the gate's refusals, nothing answered); for retrieval,
**BM25 only** and dense only beside the hybrid ranking. A score means its margin over them.
How to read each column: `evals/README.md`. Runs are on this project's shared 2-core
machines; a report records its machine only in its note, so absolute times are
machine-bound.
"""

ANSWERS = """\
## Answers on every site (the default model)

`.venv/bin/python -m evals.answer_sets --sites /tmp/sk` builds each site, serves it with
`site-knowledge serve` (preset `{preset}`) and asks its answer set; then
`site-knowledge eval --table REPORTS` prints this table.
"""

ENGINES = """\
## Battery v2 on the example site, every engine and model

`site-knowledge serve SITE --model-preset PRESET --threads 2`, then
`site-knowledge eval --engine gateway --url http://127.0.0.1:8787 --site SITE --battery v2`
(`--engine browser` for the chat box in headless Chromium, `--only` for a subset); then
`site-knowledge eval --table REPORTS`.
"""

RETRIEVAL = """\
## Retrieval, every question set

`.venv/bin/python -m evals.retrieval_sets --sites /tmp/sk` (no model: page-level ranking and
the gate, each set on its own site).
"""

MEASURED = {
    "build-scale": "Build cost at 1,000 to 10,000 pages, against a plain `mkdocs build` "
                   "(`python -m benchmarks.bench_build_scale`)",
    "shards": "The sharded artifact against the single file, per site "
              "(`python -m benchmarks.bench_shards`)",
    "shards-box-10000": "The box in Chromium on the 10,000-page site, shards against the single "
                        "file (`python -m benchmarks.bench_shards --chromium-synthetic`)",
    "retrieval-fastapi-languages": "Recall@4 (MRR) per language on FastAPI en/zh/es "
                                   "(`python -m evals.languages`)",
    "reground-grounding": "Grounding re-run on the stored answers: score; facts present; "
                          "expected page cited; answered; refused when due "
                          "(`python -m evals.reground --figures`)",
    "focus-evidence": "First token on two cores with AVX but no AVX2 (2026-12-05's machine), "
                      "the gateway against llama-server alone on the same prompts "
                      "(`python -m benchmarks.bench_ttft`)",
    "repack": "First token and whole answer on two cores with AVX-512, weight repacking on "
              "and off (`python -m benchmarks.bench_llama_args`)",
    "repack-default": "First token at the default (`--repack auto`: off on this CPU with "
                      "AVX-512), the gateway against llama-server alone on all five sites "
                      "(`python -m benchmarks.bench_ttft`), and what it costs the answer sets",
    "numerics-noise": "How far arithmetic alone moves the answer sets: a speculative draft as a "
                      "control beside repacking off (`python -m evals.answer_sets`)",
    "speculative-draft": "Speculative decoding with the 0.5B drafting for the 1.5B, on two "
                         "cores with AVX-512 (`python -m benchmarks.bench_llama_args`; slower, "
                         "not kept)",
    "gate-paraphrases": "The gate on every answer set: answerable questions it refuses, and "
                        "what it lets through (`python -m evals.gate_check`)",
}
"""Benchmark reports (Markdown, named ``<kind>-<date>.md``) whose first table the page quotes."""

BENCHMARKS = """\
## Benchmark harnesses

Run them side by side with their baseline on one machine:

- build cost against plain `mkdocs build`:
  `.venv/bin/python -m benchmarks.bench_build --site netbox --repeat 3`
- the encoder's floor: `.venv/bin/python -m benchmarks.bench_encoder_floor SITE_DIR`
- artifact bytes per passage: `.venv/bin/python -m benchmarks.bench_site_size`
- query latency and bytes in the browser: `.venv/bin/python -m benchmarks.bench_browser --json OUT`
- first token, the gateway against llama-server alone:
  `.venv/bin/python -m benchmarks.bench_ttft --site SITE_DIR --questions evals/netbox/answers.jsonl --out OUT`
- a llama-server setting, with it against without it:
  `.venv/bin/python -m benchmarks.bench_llama_args --site DIR --questions v2 --repack on --variant=-nr`
- gateway overhead: `.venv/bin/python -m benchmarks.bench_gateway_overhead --rounds 30 --threads 1`
- KV slots, cold against warm: `.venv/bin/python -m benchmarks.bench_kv_slots --scenarios 10 --threads 1`
- load and soak: `.venv/bin/python -m benchmarks.bench_gateway_load --soak-minutes 30 --out OUT`
"""


class ReportError(ValueError):
    """A report the page reads is not JSON or lacks a field the page needs."""


def _check(path: Path, doc: dict[str, Any], fields: dict[str, tuple[str, ...]]) -> None:
    """Raise ReportError naming ``path`` and the first of its kind's ``fields`` it lacks."""
    for dotted in fields[doc["kind"]]:
        value: Any = doc
        for key in dotted.split("."):
            if not isinstance(value, dict) or key not in value:
                raise ReportError(f"{path}: a {doc['kind']} report needs '{dotted}'")
            value = value[key]


def load(folder: Path) -> list[Report]:
    """Every battery and retrieval report in ``folder``, checked for the fields that select.

    Raises:
        ReportError: naming the file and the missing field or the JSON error.
    """
    reports = []
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ReportError(f"{path}: not a JSON report ({error})") from None
        if isinstance(doc, dict) and doc.get("kind") in SELECTED_BY:
            _check(path, doc, SELECTED_BY)
            reports.append((path, doc))
    return reports


def newest(reports: Sequence[Report], key: Callable[[dict[str, Any]], Hashable]) -> list[Report]:
    """The newest report (by its ``date``) of each kind ``key`` names, in the order of the keys,
    checked for the fields the tables read."""
    best: dict[Hashable, Report] = {}
    for path, doc in reports:
        k = key(doc)
        if k not in best or doc["date"] > best[k][1]["date"]:
            best[k] = (path, doc)
    for path, doc in best.values():
        _check(path, doc, SHOWN)
    return [best[k] for k in sorted(best, key=str)]


def _model(doc: dict[str, Any]) -> str:
    return str(doc["model"].get("name") or "model not recorded")


def _sources(rows: Sequence[Report]) -> str:
    """One line per row: the report file, its date, engine, model, size and note."""
    lines = ["Reports:", ""]
    for path, doc in rows:
        note = (doc.get("configuration") or {}).get("note") or ""
        rescored = f", rescored {doc['rescored_at'][:10]}" if doc.get("rescored_at") else ""
        size = f"{len(doc['questions'])} questions" if doc["kind"] == "battery" else ""
        facts = [doc["date"][:10] + rescored, doc["engine"], _model(doc), size, note]
        lines.append(f"- {doc['label']}: `evals/reports/{path.with_suffix('.md').name}` "
                     f"({'; '.join(f for f in facts if f)})")
    return "\n".join(lines) + "\n"


def _battery_section(heading: str, rows: Sequence[Report], label: Callable[[dict[str, Any]], str]) -> str:
    named = sorted(((path, {**doc, "label": label(doc)}) for path, doc in rows),
                   key=lambda row: row[1]["label"])
    return "\n".join([heading, report.table([doc for _, doc in named]), _sources(named)])


def first_table(path: Path) -> str:
    """The first Markdown table of the report at ``path``.

    Raises:
        ReportError: naming the file, when it holds no table.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), None)
    if start is None:
        raise ReportError(f"{path}: a benchmark report needs a Markdown table")
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[start:end])


def _measured_section(folder: Path) -> str | None:
    """The first table of the newest report of each ``MEASURED`` kind, with its file."""
    parts = ["## Benchmarks measured\n"]
    for kind, title in MEASURED.items():
        named = sorted(folder.glob(f"{kind}-????-??-??.md"))
        if named:
            path = named[-1]
            parts.append(f"### {title}\n\n{first_table(path)}\n\n"
                         f"Report: `evals/reports/{path.name}`.\n")
    return "\n".join(parts) if len(parts) > 1 else None


def render(folder: Path) -> str:
    """The page for the reports in ``folder``."""
    reports = load(folder)
    batteries = [(p, d) for p, d in reports if d["kind"] == "battery"]
    default = preset(DEFAULT_PRESET).file_name
    answers = newest([(p, d) for p, d in batteries
                      if d["engine"] == "gateway" and d["model"].get("name") == default],
                     key=lambda d: d["artifact"]["site"])
    engines = newest([(p, d) for p, d in batteries if d["dataset"]["version"] == "v2"],
                     key=lambda d: (d["engine"], _model(d)))
    retrieval = newest([(p, d) for p, d in reports if d["kind"] == "retrieval"],
                       key=lambda d: d["dataset"]["file"])
    sections = [INTRO]
    if answers:
        sections.append(_battery_section(ANSWERS.format(preset=DEFAULT_PRESET), answers,
                                         lambda d: d["label"].removesuffix(f"-{DEFAULT_PRESET}")))
    if engines:
        sections.append(_battery_section(ENGINES, engines,
                                         lambda d: f"{d['engine']}, {_model(d)}"))
    if retrieval:
        table = retrieval_table({doc["label"]: doc for _, doc in retrieval})
        sections.append("\n".join([RETRIEVAL, table, _sources(retrieval)]))
    measured = _measured_section(folder)
    if measured:
        sections.append(measured)
    sections.append(BENCHMARKS)
    return "\n".join(sections)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write the page, or with ``--check`` say whether it is current."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reports", type=Path, default=REPORTS, help="report folder")
    parser.add_argument("--out", type=Path, default=PAGE, help="the page to write")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = parser.parse_args(argv)
    try:
        text = render(args.reports)
    except ReportError as error:
        raise SystemExit(f"performance page: {error}") from None
    if args.check:
        current = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'current' if current else 'out of date'}")
        return 0 if current else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
