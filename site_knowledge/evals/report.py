"""Reports: one JSON and one Markdown file per run, and a comparison table of two runs."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def default_dir() -> Path:
    """``evals/reports`` when run from a checkout's root, else the current folder."""
    checkout = Path("evals") / "reports"
    return checkout if checkout.is_dir() else Path(".")


def slug(text: str) -> str:
    """A file-name-safe label."""
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-") or "run"


def write(document: dict[str, Any], out_dir: Path, stem: str) -> tuple[Path, Path]:
    """Write ``<stem>.json`` and ``<stem>.md`` into ``out_dir``; return both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{stem}.json"
    md_path = out_dir / f"{stem}.md"
    json_path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    md_path.write_text(markdown(document), "utf-8")
    return json_path, md_path


def _fmt(value: object) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _rate(part: float, whole: float) -> str:
    """``97.9% (46/47)``, or ``n/a`` for none."""
    if not whole:
        return "n/a"
    return f"{100 * part / whole:.1f}% ({int(part)}/{int(whole)})"


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def _identity(doc: dict[str, Any]) -> list[str]:
    dataset, artifact, model = doc["dataset"], doc["artifact"], doc["model"]
    return [
        f"- date: {doc['date']}",
        f"- dataset: `{dataset['file']}` version {dataset['version']}, "
        f"{dataset['questions']} questions, sha256 `{dataset['sha256'][:16]}…`",
        f"- artifact: sha256 `{str(artifact.get('sha256', ''))[:16]}…` "
        f"({artifact.get('passages', '?')} passages, {artifact.get('sources', '?')} sources)",
        f"- model: {model.get('name') or 'unknown'}, sha256 `{model.get('sha256') or 'unknown'}`",
        f"- engine: {doc['engine']}",
        f"- configuration: `{json.dumps(doc['configuration'], sort_keys=True)}`",
    ]


def markdown(doc: dict[str, Any]) -> str:
    """Render a report document as Markdown."""
    if doc["kind"] == "retrieval":
        return _retrieval_md(doc)
    return _battery_md(doc)


def _retrieval_md(doc: dict[str, Any]) -> str:
    summary = doc["summary"]
    lines = [f"# Retrieval eval: {doc['label']}", "", *_identity(doc), ""]
    lines += ["## Ranking (gate open), page level", ""]
    rows = []
    for mode, m in summary["modes"].items():
        r, e = m["ranking"], m["end_to_end"]
        rows.append(
            [
                mode,
                r.get("recall@1", 0.0),
                r.get("recall@4", 0.0),
                r.get("recall@10", 0.0),
                r.get("mrr", 0.0),
                e.get("recall@4", 0.0),
                m["latency_ms"]["p50"],
                m["latency_ms"]["p95"],
            ]
        )
    lines += _table(
        [
            "mode",
            "recall@1",
            "recall@4",
            "recall@10",
            "MRR",
            "recall@4 after gate",
            "p50 ms",
            "p95 ms",
        ],
        rows,
    )
    lines += ["", "## By question kind (recall@4 / MRR)", ""]
    kinds = sorted({k for m in summary["modes"].values() for k in m["by_kind"]})
    kind_rows = []
    for kind in kinds:
        row: list[object] = [kind, int(summary["modes"]["hybrid"]["by_kind"][kind]["questions"])]
        for mode in summary["modes"]:
            k = summary["modes"][mode]["by_kind"][kind]
            row.append(f"{k.get('recall@4', 0.0):.3f} / {k.get('mrr', 0.0):.3f}")
        kind_rows.append(row)
    lines += _table(["kind", "n", *summary["modes"].keys()], kind_rows)
    gate = summary["gate"]
    lines += ["", "## Gate (the compiler's calibrated thresholds, not tuned here)", ""]
    lines += _table(
        [
            "answerable passed",
            "off-topic/gibberish/injection refused",
            "in scope passed",
            "in scope refused",
            "out of scope passed",
            "out of scope refused",
            "pass precision",
            "refuse precision",
        ],
        [
            [
                _rate(gate["passed_in_scope"], gate["in_scope"]),
                _rate(gate.get("refused_gated", 0), gate.get("gated", 0)),
                int(gate["passed_in_scope"]),
                int(gate["refused_in_scope"]),
                int(gate["passed_out_of_scope"]),
                int(gate["refused_out_of_scope"]),
                gate["pass_precision"],
                gate["refuse_precision"],
            ]
        ],
    )
    by_kind = gate.get("by_kind") or {}
    if by_kind:
        lines += [""]
        lines += _table(
            ["kind", "questions", "passed by the gate"],
            [[k, v["questions"], v["passed"]] for k, v in by_kind.items()],
        )
    lines += ["", "## Findings", "", *[f"- {f}" for f in doc["findings"]], ""]
    variants = doc.get("diagnostics", {}).get("weight_variants") or {}
    if variants:
        lines += ["## Diagnostic: fusion weights (gate open; not used to tune the artifact)", ""]
        kinds = sorted({k for v in variants.values() for k in v["by_kind"]})
        vrows = [
            [name, v["recall@4"], v["mrr"], *(f"{v['by_kind'][k]['recall@4']:.3f}" for k in kinds)]
            for name, v in variants.items()
        ]
        lines += _table(["hybrid variant", "recall@4", "MRR", *(f"{k} r@4" for k in kinds)], vrows)
        lines.append("")
    lines += ["## Misses and gate errors", ""]
    for q in doc["questions"]:
        for note in q["notes"]:
            lines.append(f"- `{q['id']}` ({q['category']}) {q['question']!r}: {note}")
    return "\n".join(lines) + "\n"


def _share(v: dict[str, Any] | None) -> str:
    return "n/a" if v is None else f"{v['score']}/{v['max_score']} ({v['percent']:.1f}%)"


def _headline(doc: dict[str, Any]) -> list[str]:
    summary, baselines = doc["summary"], doc.get("baselines") or {}
    lines = [f"**Score: {_share(summary)}**", ""]
    for name, base in baselines.items():
        margin = summary.get("margin", {}).get(name, 0)
        lines.append(f"- baseline {name}: {_share(base)}; margin {margin:+d} points")
    if not baselines:
        lines.append("- baselines: not computed (a report from before they existed)")
    accept = summary.get("acceptance")
    if accept:
        citing = accept["answerable_citing_expected"]
        times, premises = accept["times_constant_refusal"], accept["false_premise_percent"]
        lines += [
            f"- times the constant refusal: {'n/a' if times is None else f'{times:.2f}'}; "
            f"false premises: {'n/a' if premises is None else f'{premises:.1f}%'}",
            f"- injections obeyed: {len(accept['injections_obeyed'])} {accept['injections_obeyed']}; "
            f"invented private claims: {len(accept['invented_private_claims'])} "
            f"{accept['invented_private_claims']}",
            f"- answerable answers citing an expected source: {_fmt(citing['cited'])} of {citing['of']}; "
            f"answers marked grounded: false: {accept['grounded_false']}",
        ]
    causes = summary.get("lost_by_cause")
    if causes:
        lines.append("- points lost by cause: " + ", ".join(f"{k} {v}" for k, v in sorted(causes.items())))
    return [*lines, ""]


def _battery_md(doc: dict[str, Any]) -> str:
    summary = doc["summary"]
    lines = [f"# Battery: {doc['label']}", "", *_identity(doc), ""]
    if doc.get("rescored_at"):
        previous = doc.get("previous_score") or {}
        used = doc.get("rescored_with_artifact") or {}
        lines += [
            f"Rescored {doc['rescored_at']} with the current scorer from stored answers "
            f"(score before: {previous.get('score', '?')}/{previous.get('max_score', '?')}), "
            f"against artifact `{str(used.get('sha256'))[:16]}…` ({used.get('passages', '?')} passages; "
            "URLs, citations, private claims and the gate-only baseline are checked against it).",
            "",
        ]
    if not doc.get("complete", True):
        lines += [f"**Incomplete run: {summary['questions']} of {doc['planned']} questions.**", ""]
    lines += _headline(doc)
    names = list(doc.get("baselines") or {})
    rows = [
        [c, v["n"], v["score"], v["max_score"], f"{v['percent']:.1f}"]
        + [doc["baselines"][n]["by_category"].get(c, {}).get("score", "") for n in names]
        for c, v in summary["by_category"].items()
    ]
    lines += _table(["category", "n", "score", "max", "%", *names], rows)
    if doc.get("judge_summary"):
        j = doc["judge_summary"]
        lines += [
            "",
            f"Model-as-judge (opinion only, not the score): {j['score']}/{j['max_score']}"
            f", {j['errors']} errors",
        ]
    lat = doc["latency_ms"]
    lines += ["", "## Latency (ms)", ""]
    lines += _table(
        ["", "p50", "p90", "p95", "max"],
        [
            ["answer", lat["p50"], lat["p90"], lat["p95"], lat["max"]],
            [
                "first token",
                lat["first_token_p50"],
                lat["first_token_p90"],
                lat["first_token_p95"],
                lat["first_token_max"],
            ],
        ],
    )
    lines += ["", f"Wall time: {doc.get('wall_s', 0):.1f} s", "", "## Every lost point", ""]
    for q in doc["questions"]:
        why = f", {q['cause']}" if q.get("cause") else ""
        for note in q["notes"]:
            lines.append(f"- `{q['id']}` ({q['category']}, {q['score']}/{q['max_score']}{why}): {note}")
    lines += ["", "## Answers", ""]
    for q in doc["questions"]:
        lines.append(f"- `{q['id']}` {q['score']}/{q['max_score']} — Q: {q['question']}  ")
        if q.get("standalone"):
            lines.append(f"  read as: {q['standalone']}  ")
        lines.append(f"  A: {_clip(q.get('answer') or '')}  ")
        if q.get("streamed_answer") is not None:
            lines.append(f"  streamed (replaced): {_clip(q['streamed_answer'])}  ")
        evidence = q.get("evidence")
        if evidence is not None:
            shown = "; ".join(f"[{e['n']}] {e['url']}" for e in evidence) or "none"
            lines.append(f"  evidence: {shown}" + ("; grounded: false" if q.get("grounded") is False else ""))
    return "\n".join(lines) + "\n"


def _clip(text: str, limit: int = 400) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"


def _metrics(doc: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    if doc["kind"] == "retrieval":
        for mode, m in doc["summary"]["modes"].items():
            for key in ("recall@1", "recall@4", "recall@10", "mrr"):
                out[f"{mode} {key}"] = float(m["ranking"].get(key, 0.0))
            out[f"{mode} recall@4 after gate"] = float(m["end_to_end"].get("recall@4", 0.0))
            out[f"{mode} p50 ms"] = float(m["latency_ms"]["p50"])
        for key in ("pass_precision", "pass_recall", "refuse_precision", "refuse_recall",
                    "refuse_rate_gated"):
            if key in doc["summary"]["gate"]:
                out[f"gate {key}"] = float(doc["summary"]["gate"][key])
    else:
        summary = doc["summary"]
        out["total"] = float(summary["score"])
        out["total %"] = float(summary["percent"])
        for cat, v in summary["by_category"].items():
            out[f"{cat}"] = float(v["score"])
        for name, base in (doc.get("baselines") or {}).items():
            out[f"baseline {name}"] = float(base["score"])
        for key in ("p50", "p95", "first_token_p50"):
            if doc["latency_ms"].get(key) is not None:
                out[f"latency {key} ms"] = float(doc["latency_ms"][key])
    return out


def compare(a: dict[str, Any], b: dict[str, Any]) -> str:
    """A Markdown table of the metrics two reports share, with the difference B − A."""
    ma, mb = _metrics(a), _metrics(b)
    keys = [k for k in ma if k in mb] + [k for k in mb if k not in ma]
    name_a = f"A: {a.get('label', '')} ({a['date'][:10]})"
    name_b = f"B: {b.get('label', '')} ({b['date'][:10]})"
    rows = []
    for key in keys:
        va, vb = ma.get(key), mb.get(key)
        delta = "" if va is None or vb is None else f"{vb - va:+.3f}"
        rows.append([key, "" if va is None else va, "" if vb is None else vb, delta])
    lines = [f"# Comparison: {a.get('label', '')} vs {b.get('label', '')}", ""]
    lines.append(
        f"- A: {a['engine']}, dataset {a['dataset']['version']}, "
        f"artifact `{str(a['artifact'].get('sha256', ''))[:12]}`"
    )
    lines.append(
        f"- B: {b['engine']}, dataset {b['dataset']['version']}, "
        f"artifact `{str(b['artifact'].get('sha256', ''))[:12]}`"
    )
    lines.append("")
    lines += _table(["metric", name_a, name_b, "B − A"], rows)
    if a["kind"] == b["kind"] == "battery":
        qa = {q["id"]: q for q in a["questions"]}
        shared = [q for q in b["questions"] if q["id"] in qa]
        same = sum(1 for q in shared if q.get("answer") == qa[q["id"]].get("answer"))
        lines += ["", f"Identical answer text: {same} of {len(shared)} questions."]
        changed = [
            (q["id"], qa[q["id"]]["score"], q["score"])
            for q in b["questions"]
            if q["id"] in qa and qa[q["id"]]["score"] != q["score"]
        ]
        if changed:
            lines += ["", "Questions whose score changed:", ""]
            lines += _table(["id", "A", "B"], changed)
    return "\n".join(lines) + "\n"


def load(path: Path) -> dict[str, Any]:
    """Read a report JSON file."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _whole(percent: float | None) -> str:
    return "n/a" if percent is None else f"{percent:.0f}%"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 1000:.1f}"


def table(docs: Sequence[dict[str, Any]]) -> str:
    """One Markdown table across battery reports (one row per site): the score and its margin
    over the constant refusal and the gate alone, the visitor-facing rates beside the gate
    alone's, expected pages cited, injections obeyed, and the latency of generated answers."""
    rows = []
    for doc in docs:
        summary, baselines = doc["summary"], doc.get("baselines") or {}
        gate = baselines.get("gate-only", {})
        constant = baselines.get("constant-refusal", {})
        own, gated = summary.get("rates", {}), gate.get("rates", {})
        accept = summary.get("acceptance", {})
        citing = accept.get("answerable_citing_expected", {})
        latency = doc.get("latency_ms", {})
        rows.append([
            doc.get("label", ""), len(doc["questions"]),
            f"{summary['percent']:.0f}% ({_whole(constant.get('percent'))} / {_whole(gate.get('percent'))})",
            f"{_percent(own.get('facts_present'))} ({_percent(gated.get('facts_present'))})",
            _rate(citing.get("cited") or 0, citing.get("of") or 0),
            f"{_percent(own.get('answered'))} ({_percent(gated.get('answered'))})",
            f"{_percent(own.get('refused_when_due'))} ({_percent(gated.get('refused_when_due'))})",
            len(accept.get("injections_obeyed", [])),
            f"{_seconds(latency.get('generated_first_token_p50'))} / "
            f"{_seconds(latency.get('generated_first_token_p95'))}",
            f"{_seconds(latency.get('p50'))} / {_seconds(latency.get('p95'))}",
        ])
    header = ["site", "items", "score (constant refusal / gate only)", "facts present (gate only)",
              "expected page cited", "answerable answered (gate only)",
              "off-topic, gibberish, injection refused (gate only)", "injections obeyed",
              "first token p50 / p95 (s)", "total p50 / p95 (s)"]
    return "\n".join(_table(header, rows)) + "\n"
