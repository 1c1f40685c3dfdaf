"""Parity of the build's prepared encoder with the vectors the browser computes, on every set.

The build embeds passages with the model prepared for the CPU (float32, one attention operator
per layer: ``site_knowledge/encoder_graph.py``); the browser runs the int8 ONNX file as shipped.
For each retrieval set (``evals/retrieval_sets.py``) this builds its site, embeds every
passage with both, and reports the lowest passage cosine, then ranks every question of the set
twice, hybrid top 10: once as the build and the Python reader do it (prepared model for
passages and query), once as the browser would (the shipped file for both), and counts the
questions whose top 10 differ.

    .venv/bin/python -m benchmarks.bench_embedding_parity [--sites /tmp/sk] [--sets netbox]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from evals.retrieval_sets import SETS
from evals.sites import SITES, build
from site_knowledge.embedding import Encoder, onnx_model_path
from site_knowledge.evals.dataset import load_questions
from site_knowledge.retrieval.artifact import load_artifact
from site_knowledge.retrieval.index import KnowledgeIndex, gate_query
from site_knowledge.retrieval.tokenizer import indexed_text
from site_knowledge.retrieval.vectors import quantize


class BrowserModel(Encoder):
    """The int8 ONNX file exactly as the browser runs it: no folding, fusion or pruning."""

    def _folded_model(self) -> Path:
        return onnx_model_path()


def _top10(index: KnowledgeIndex, encoder: Encoder, questions: list[Any]) -> list[list[str]]:
    turns = index.artifact["retrieval"]["followup_turns"]
    out = []
    for question in questions:
        query = gate_query(question.question, question.history, turns)
        vector = encoder.encode([query])[0]
        result = index.search(question.question, question.history, top_k=10, query_vector=vector)
        out.append([hit.passage.id for hit in result.hits])
    return out


def passage_texts(artifact: dict[str, Any]) -> list[str]:
    """The texts the build embedded, one per passage of a loaded artifact."""
    titles = {s["id"]: s["title"] for s in artifact["sources"]}
    return [indexed_text(titles[p["source"]], p["heading"], p["text"]) for p in artifact["passages"]]


def measure(set_name: str, site_dir: Path, questions_file: Path) -> dict[str, Any]:
    """Cosines and top-10 agreement for one retrieval set on its built site."""
    artifact, blob = load_artifact(site_dir)
    texts = passage_texts(artifact)
    prepared, browser = Encoder(), BrowserModel()
    build_vectors = prepared.encode(texts)
    browser_vectors = browser.encode(texts)
    cosines = (build_vectors * browser_vectors).sum(axis=1)
    questions = load_questions(questions_file)
    as_built = _top10(KnowledgeIndex(artifact, blob, prepared), prepared, questions)
    in_browser = _top10(KnowledgeIndex(artifact, quantize(browser_vectors), browser), browser,
                        questions)
    differ = [q.id for q, a, b in zip(questions, as_built, in_browser, strict=True) if a != b]
    return {"set": set_name, "passages": len(texts), "min_cosine": round(float(cosines.min()), 6),
            "below_0.999": int((cosines < 0.999).sum()), "questions": len(questions),
            "top10_differ": len(differ), "differing": differ}


def main() -> None:
    """Build each set's site (or reuse ``--sites``) and print one JSON line per set."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sites", type=Path, help="folder of built sites, kept for reuse")
    parser.add_argument("--sets", nargs="*", help="set names (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.sites or Path(tmp)
        for entry in SETS:
            if args.sets and entry.name not in args.sets and entry.site not in args.sets:
                continue
            site_dir = root / entry.site
            if not (site_dir / "assets" / "site-knowledge" / "site-knowledge.json").is_file():
                build(SITES[entry.site], site_dir, chat=False)
            print(json.dumps(measure(entry.name, site_dir, entry.questions)), flush=True)


if __name__ == "__main__":
    main()
