"""``site-knowledge query``: search a built site or artifact from the command line."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from site_knowledge.retrieval import ArtifactError, KnowledgeIndex, SearchResult, load_index
from site_knowledge.retrieval.index import MODES


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``query`` subcommand."""
    parser = subparsers.add_parser("query", help="search a built site's knowledge artifact")
    parser.add_argument("path", type=Path, help="a built site folder or site-knowledge.json")
    parser.add_argument("question", nargs="?", help="the question (omit with --batch)")
    parser.add_argument("--mode", choices=MODES, default="hybrid")
    parser.add_argument("--top-k", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--batch", type=Path,
                        help="file with one question per line; prints one JSON line each")
    parser.set_defaults(handler=run_query)


def result_json(index: KnowledgeIndex, result: SearchResult, elapsed_ms: float) -> dict[str, Any]:
    """The CLI's JSON contract for one question."""
    return {
        "answerable": result.answerable,
        "gate": result.gate,
        "results": [
            {"passage_id": hit.passage.id, "source_id": hit.source.id, "path": hit.source.path,
             "url": hit.passage.url, "title": hit.source.title, "heading": hit.passage.heading,
             "score": round(hit.score, 6), "bm25_rank": hit.bm25_rank,
             "dense_rank": hit.dense_rank}
            for hit in result.hits
        ],
        "timing_ms": round(elapsed_ms, 3),
    }


def _timed_search(index: KnowledgeIndex, question: str, args: argparse.Namespace,
                  ) -> dict[str, Any]:
    started = time.perf_counter()
    result = index.search(question, mode=args.mode, top_k=args.top_k)
    return result_json(index, result, (time.perf_counter() - started) * 1000)


def run_query(args: argparse.Namespace) -> int:
    """Run one question or a batch; exit 2 on a bad artifact or bad arguments."""
    if (args.question is None) == (args.batch is None):
        print("site-knowledge query: give a question or --batch FILE, not both", file=sys.stderr)
        return 2
    try:
        index = load_index(args.path)
        questions = (
            [line.strip() for line in args.batch.read_text(encoding="utf-8").splitlines()
             if line.strip()]
            if args.batch else [args.question]
        )
        index.embed("")  # load the encoder now, so timing_ms measures the search alone
    except (ArtifactError, OSError) as error:
        print(f"site-knowledge query: {error}", file=sys.stderr)
        return 2
    for question in questions:
        output = _timed_search(index, question, args)
        if args.json or args.batch:
            print(json.dumps(output, ensure_ascii=False))
        else:
            _print_human(question, output)
    return 0


def _print_human(question: str, output: dict[str, Any]) -> None:
    gate = output["gate"]
    verdict = "answerable" if output["answerable"] else "not on this site (gate refused)"
    print(f"{question}\n  {verdict}: coverage {gate['coverage']:.2f} "
          f"(min {gate['min_coverage']:.2f}), cosine {gate['cosine']:.3f} "
          f"(min {gate['min_cosine']:.2f}, strong {gate['strong_cosine']:.2f})")
    for rank, hit in enumerate(output["results"], start=1):
        heading = f" > {hit['heading']}" if hit["heading"] else ""
        print(f"  {rank}. {hit['title']}{heading}  [{hit['url']}]  score {hit['score']:.4f}")
    print(f"  {output['timing_ms']:.1f} ms")
