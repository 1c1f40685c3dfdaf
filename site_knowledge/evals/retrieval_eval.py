"""Retrieval eval: page-level recall@1/4/10, MRR and the gate's precision/recall per mode.

A result is a hit when its source's page path, or its source id (ontology sources), is among
the question's expected ones. Ranking is measured with the gate open (so a gated-out question
still tells us how the ranking did), and separately end to end (a hit only counts when the
gate let the question through). The gate is the artifact's own, calibrated by the compiler:
nothing here tunes it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from site_knowledge.embedding import file_sha256 as sha256_file
from site_knowledge.evals.dataset import RetrievalQuestion
from site_knowledge.retrieval.gate import OPEN_GATE

if TYPE_CHECKING:
    from site_knowledge.retrieval.index import Mode

MODES: tuple[Mode, ...] = ("bm25", "dense", "hybrid")
KS = (1, 4, 10)
TOP_K = 10


@dataclass
class QuestionResult:
    """One question's ranks per mode and the gate's verdict."""

    question: RetrievalQuestion
    answerable: bool
    gate: dict[str, Any]
    ranks: dict[str, int | None] = field(default_factory=dict)
    top: dict[str, list[str]] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)

    @property
    def in_scope(self) -> bool:
        return self.question.in_scope

    @property
    def ranked(self) -> bool:
        """Whether the question counts for ranking metrics (it has expected pages)."""
        return bool(self.question.expected)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return float(ordered[index])


def _hit_key(source_id: str, path: str | None) -> tuple[str, ...]:
    return (source_id,) if path is None else (source_id, path)


def run(artifact_path: Path, questions: Sequence[RetrievalQuestion]) -> list[QuestionResult]:
    """Search every question in every mode with the open gate, and record the real gate.

    Args:
        artifact_path: The artifact JSON or a built site folder.
        questions: The questions to run.

    Returns:
        One result per question.
    """
    from site_knowledge.retrieval import KnowledgeIndex
    from site_knowledge.retrieval.artifact import load_artifact
    from site_knowledge.retrieval.index import gate_query

    artifact, blob = load_artifact(artifact_path)
    gated = KnowledgeIndex(artifact, blob)
    ungated = KnowledgeIndex({**artifact, "gate": OPEN_GATE}, blob, gated.encoder)
    turns = int(artifact["retrieval"]["followup_turns"])
    results: list[QuestionResult] = []
    for q in questions:
        started = time.perf_counter()
        vector = gated.embed(gate_query(q.question, q.history, turns))
        embed_ms = (time.perf_counter() - started) * 1000
        verdict = gated.search(q.question, q.history, mode="hybrid", top_k=1, query_vector=vector,
                               lang=q.lang)
        result = QuestionResult(q, verdict.answerable, verdict.gate)
        for mode in MODES:
            started = time.perf_counter()
            found = ungated.search(
                q.question,
                q.history,
                mode=mode,
                top_k=TOP_K,
                query_vector=vector,
                lang=verdict.lang if verdict.answerable else q.lang,
            )
            result.latency_ms[mode] = embed_ms + (time.perf_counter() - started) * 1000
            keys = [_hit_key(h.source.id, h.source.path) for h in found.hits]
            result.top[mode] = [k[-1] for k in keys]
            result.ranks[mode] = next(
                (n for n, key in enumerate(keys, 1) if set(key) & set(q.expected)), None
            )
        results.append(result)
    return results


def _ranking(results: Sequence[QuestionResult], mode: str, gate: bool) -> dict[str, float]:
    scoped = [r for r in results if r.ranked]
    metrics: dict[str, float] = {"questions": float(len(scoped))}
    if not scoped:
        return metrics

    def rank(r: QuestionResult) -> int | None:
        return r.ranks[mode] if (r.answerable or not gate) else None

    for k in KS:
        metrics[f"recall@{k}"] = sum(1 for r in scoped if (x := rank(r)) and x <= k) / len(scoped)
    metrics["mrr"] = sum(1 / x for r in scoped if (x := rank(r))) / len(scoped)
    return metrics


def gate_metrics(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """The gate as a classifier, both ways round, and the two rates the targets name.

    ``pass_*``: positive = answered; precision is the in-scope share of what it let through,
    recall the in-scope share it let through. ``refuse_*``: positive = refused; precision is
    the out-of-scope share of what it refused, recall the out-of-scope share it refused.
    ``pass_rate_answerable`` is ``pass_recall``; ``refuse_rate_gated`` is the share refused of
    the off-topic, gibberish and injection questions (private questions about what the site
    covers are out of scope but left to the model, so they are not in it). ``by_kind`` counts
    the questions each kind sent and let through.
    """
    tp = sum(1 for r in results if r.in_scope and r.answerable)
    fn = sum(1 for r in results if r.in_scope and not r.answerable)
    fp = sum(1 for r in results if not r.in_scope and r.answerable)
    tn = sum(1 for r in results if not r.in_scope and not r.answerable)
    gated = [r for r in results if r.question.gated]
    refused_gated = sum(1 for r in gated if not r.answerable)

    def ratio(a: int, b: int) -> float:
        return a / b if b else 0.0

    by_kind: dict[str, dict[str, int]] = {}
    for r in results:
        counts = by_kind.setdefault(r.question.kind, {"questions": 0, "passed": 0})
        counts["questions"] += 1
        counts["passed"] += int(r.answerable)
    return {
        "in_scope": float(tp + fn),
        "out_of_scope": float(fp + tn),
        "passed_in_scope": float(tp),
        "refused_in_scope": float(fn),
        "passed_out_of_scope": float(fp),
        "refused_out_of_scope": float(tn),
        "pass_precision": ratio(tp, tp + fp),
        "pass_recall": ratio(tp, tp + fn),
        "refuse_precision": ratio(tn, tn + fn),
        "refuse_recall": ratio(tn, tn + fp),
        "gated": float(len(gated)),
        "refused_gated": float(refused_gated),
        "pass_rate_answerable": ratio(tp, tp + fn),
        "refuse_rate_gated": ratio(refused_gated, len(gated)),
        "by_kind": dict(sorted(by_kind.items())),
    }


def summarise(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """Per mode: ranking with the gate open and end to end, by kind, and latency."""
    kinds = sorted({r.question.kind for r in results if r.ranked})
    modes: dict[str, Any] = {}
    for mode in MODES:
        latencies = [r.latency_ms[mode] for r in results]
        modes[mode] = {
            "ranking": _ranking(results, mode, gate=False),
            "end_to_end": _ranking(results, mode, gate=True),
            "by_kind": {
                k: _ranking([r for r in results if r.question.kind == k], mode, gate=False) for k in kinds
            },
            "latency_ms": {
                "p50": percentile(latencies, 50),
                "p95": percentile(latencies, 95),
                "max": max(latencies, default=0.0),
            },
        }
    return {"modes": modes, "gate": gate_metrics(results)}


VARIANTS: dict[str, dict[str, float]] = {
    "as built": {},
    "no page BM25": {"page_bm25": 0.0},
    "no page signals": {"page_bm25": 0.0, "page_dense": 0.0},
    "dense lists x2": {"dense": 2.0, "page_dense": 2.0},
    "BM25 lists x0.5": {"bm25": 0.5, "page_bm25": 0.5},
}
"""Fusion weight variants, reported as a diagnostic of *why* hybrid wins or loses; the
artifact's own weights are what the eval scores, and nothing here changes them."""


def weight_variants(artifact_path: Path, questions: Sequence[RetrievalQuestion]) -> dict[str, dict[str, Any]]:
    """Hybrid recall@4 and MRR (gate open) for each fusion-weight variant, overall and by kind."""
    from site_knowledge.retrieval import KnowledgeIndex
    from site_knowledge.retrieval.artifact import load_artifact
    from site_knowledge.retrieval.index import gate_query

    artifact, blob = load_artifact(artifact_path)
    base = KnowledgeIndex(artifact, blob)
    turns = int(artifact["retrieval"]["followup_turns"])
    ranked = [q for q in questions if q.expected]
    vectors = [base.embed(gate_query(q.question, q.history, turns)) for q in ranked]
    out: dict[str, dict[str, Any]] = {}
    for name, change in VARIANTS.items():
        settings = {**artifact["retrieval"], "weights": {**artifact["retrieval"]["weights"], **change}}
        index = KnowledgeIndex({**artifact, "gate": OPEN_GATE, "retrieval": settings}, blob, base.encoder)
        ranks: list[tuple[str, int | None]] = []
        for q, vector in zip(ranked, vectors, strict=True):
            hits = index.search(q.question, q.history, mode="hybrid", top_k=TOP_K, query_vector=vector).hits
            keys = [set(_hit_key(h.source.id, h.source.path)) for h in hits]
            ranks.append((q.kind, next((n for n, k in enumerate(keys, 1) if k & set(q.expected)), None)))

        def metrics(rows: list[tuple[str, int | None]]) -> dict[str, float]:
            n = len(rows) or 1
            return {
                "recall@4": sum(1 for _, r in rows if r and r <= 4) / n,
                "mrr": sum(1 / r for _, r in rows if r) / n,
            }

        out[name] = {
            "weights": settings["weights"],
            **metrics(ranks),
            "by_kind": {k: metrics([x for x in ranks if x[0] == k]) for k in sorted({k for k, _ in ranks})},
        }
    return out


def findings(summary: dict[str, Any]) -> list[str]:
    """Plain statements the acceptance asks for: is hybrid at least the better single mode?"""
    modes = summary["modes"]
    out: list[str] = []
    for metric in ("recall@4", "mrr"):
        hybrid = modes["hybrid"]["ranking"].get(metric, 0.0)
        best_mode = max(("bm25", "dense"), key=lambda m: modes[m]["ranking"].get(metric, 0.0))
        best = modes[best_mode]["ranking"].get(metric, 0.0)
        if hybrid + 1e-9 >= best:
            out.append(f"hybrid {metric} {hybrid:.3f} >= best single mode ({best_mode}) {best:.3f}")
        else:
            behind = [
                kind
                for kind, k in modes["hybrid"]["by_kind"].items()
                if k.get(metric, 0.0) + 1e-9 < modes[best_mode]["by_kind"][kind].get(metric, 0.0)
            ]
            out.append(
                f"hybrid {metric} {hybrid:.3f} is BELOW {best_mode} {best:.3f}; "
                f"it falls behind on: {', '.join(behind) or 'no single kind'}"
                " (per-question misses and the weight diagnostic below)"
            )
    return out


def hybrid_losses(results: Sequence[QuestionResult]) -> list[str]:
    """Each question a single mode ranks in the top 4 and hybrid does not: where and why."""
    out: list[str] = []
    for r in results:
        hybrid = r.ranks.get("hybrid")
        if not r.ranked or (hybrid and hybrid <= 4):
            continue
        for mode in ("bm25", "dense"):
            rank = r.ranks.get(mode)
            if rank and rank <= 4:
                out.append(
                    f"{r.question.id} ({r.question.kind}) {r.question.question!r}: {mode} rank {rank},"
                    f" hybrid rank {hybrid or '>10'}; hybrid's top 3 {r.top['hybrid'][:3]}"
                    f" (bm25's top 3 {r.top['bm25'][:3]})"
                )
                break
    return out


def question_records(results: Sequence[QuestionResult]) -> list[dict[str, Any]]:
    """One object per question, score 1 when the gate decided right and (for questions with
    expected pages) hybrid ranked one of them in the top 4; a note per miss in any mode."""
    records: list[dict[str, Any]] = []
    for r in results:
        notes: list[str] = []
        if r.ranked:
            score = 1 if (x := r.ranks["hybrid"]) and x <= 4 else 0
            for mode in MODES:
                rank = r.ranks[mode]
                if rank is None or rank > 4:
                    where = "not in top 10" if rank is None else f"rank {rank}"
                    notes.append(
                        f"{mode}: expected {list(r.question.expected)} {where}; top 3 {r.top[mode][:3]}"
                    )
        if r.in_scope and not r.answerable:
            score = 0
            notes.append(f"gate refused an in-scope question ({_gate_note(r.gate)})")
        elif r.in_scope and not r.ranked:
            score = 1
        elif not r.in_scope:
            score = 1 if not r.answerable else 0
            if r.answerable:
                notes.append(f"gate let an out-of-scope question through ({_gate_note(r.gate)})")
        records.append(
            {
                "id": r.question.id,
                "category": r.question.kind,
                "question": r.question.question,
                "expected": list(r.question.expected),
                "score": score,
                "max_score": 1,
                "notes": notes,
                "ranks": r.ranks,
                "answerable": r.answerable,
                "gate": r.gate,
                "top": {m: r.top[m][:4] for m in MODES},
            }
        )
    return records


def _gate_note(gate: dict[str, Any]) -> str:
    return (
        f"coverage {gate.get('coverage', 0):.2f} vs {gate.get('min_coverage')}, "
        f"cosine {gate.get('cosine', 0):.3f} vs {gate.get('min_cosine')}"
        f"/strong {gate.get('strong_cosine')}"
    )


def report(
    artifact_path: Path,
    questions_path: Path,
    questions: Sequence[RetrievalQuestion],
    results: Sequence[QuestionResult],
    label: str,
    diagnostics: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The retrieval report document (JSON-ready)."""
    from site_knowledge.retrieval.artifact import load_artifact, resolve_artifact_path

    artifact_file = resolve_artifact_path(artifact_path)
    artifact, _ = load_artifact(artifact_file)
    summary = summarise(results)
    return {
        "kind": "retrieval",
        "label": label,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "dataset": {
            "file": f"{questions_path.parent.name}/{questions_path.name}",
            "version": f"{questions_path.parent.name}/{questions_path.stem}"
            f"@{sha256_file(questions_path)[:12]}",
            "sha256": sha256_file(questions_path),
            "questions": len(questions),
        },
        "artifact": {
            "path": str(artifact_file),
            "sha256": sha256_file(artifact_file),
            "site": artifact.get("site", {}),
            "generator": artifact.get("generator"),
            "passages": len(artifact.get("passages", [])),
            "sources": len(artifact.get("sources", [])),
        },
        "model": {
            "name": artifact["embedding"]["model"],
            "sha256": artifact["embedding"].get("weights_sha256"),
        },
        "engine": "python retrieval (site_knowledge.retrieval)",
        "configuration": {
            "top_k": TOP_K,
            "retrieval": artifact.get("retrieval", {}),
            "gate": {
                k: v
                for k, v in artifact.get("gate", {}).items()
                if k not in ("calibration", "elsewhere")
            },
            "calibration": artifact.get("gate", {}).get("calibration", {}),
            "tokenizer": artifact.get("lexical", {}).get("tokenizer"),
        },
        "summary": summary,
        "findings": findings(summary) + hybrid_losses(results),
        "diagnostics": {"weight_variants": diagnostics or {}},
        "latency_ms": summary["modes"]["hybrid"]["latency_ms"],
        "questions": question_records(results),
    }
