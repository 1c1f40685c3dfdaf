"""Re-ground the answers a gateway battery report kept with today's grounding, and rescore them.

A gateway report keeps each answer as the visitor saw it, the model's own text where grounding
changed it (``streamed_answer``), and the passages the model was given (url and title). This
rebuilds that evidence from a build of the same site, grounds the model's text again with the
current checks, and scores the answers whose visible text or cited pages change (a claim
removed, the answer worded differently, a citation gained or lost) with the current scorer:
what a grounding change does to real model answers, without running the model again. Answers
refused before any model ran, or whose evidence is gone from the build, are left as they were; so are
answers whose only change would be their markers.

    .venv/bin/python -m evals.reground REPORT.json SITE_DIR [--battery v2]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Regrounded:
    """One kept answer from which today's grounding removes a claim."""

    id: str
    question: str
    before: str
    after: str
    score_before: int
    score_after: int
    kinds: tuple[str, ...]
    """The kinds of claim today's grounding removed (none: it only reworded the answer)."""


def reground(report: dict[str, Any], site_dir: Path, battery: str = "v2") -> list[Regrounded]:
    """The report's answers that today's grounding changes (removes a claim from, or words
    differently), with both scores."""
    from site_knowledge.evals.dataset import load_battery
    from site_knowledge.evals.scorer import Answer, Citation, score_answer
    from site_knowledge.evals.site import SiteIndex
    from site_knowledge.gateway.answer import cited_facts
    from site_knowledge.gateway.prompt import evidence_of, strip_citations
    from site_knowledge.grounding.site import SiteGrounding
    from site_knowledge.retrieval import KnowledgeIndex
    from site_knowledge.retrieval.artifact import load_artifact

    artifact, blob = load_artifact(site_dir)
    index = KnowledgeIndex(artifact, blob)
    grounding = SiteGrounding(index)
    passages = {}
    for p in index.passages:
        e = evidence_of(0, index.sources_by_id[p.source_id], p)
        passages[e.passage_id] = passages[(e.url, e.label())] = e.passage()
    items = {i.id: i for i in load_battery(battery).items}
    site = SiteIndex.load(site_dir)
    out: list[Regrounded] = []
    for q in report["questions"]:
        # A report names each passage by id; an older one by URL and title, which a heading
        # split into several passages shares (the last of them is taken).
        evidence = [passages.get(c.get("id") or (c["url"], c["title"])) for c in q["evidence"]]
        # Refused before any model ran (no evidence), or evidence gone from the build: kept.
        # A final answer that declined (done.refused) is the model's text, grounded again.
        if not evidence or None in evidence:
            continue
        result = grounding.ground(q.get("streamed_answer") or q["answer"],
                                  q.get("standalone") or q["question"],
                                  [p for p in evidence if p is not None])
        given = [Citation(c["n"], c["url"], c["title"], c.get("id", "")) for c in q["evidence"]]
        facts = cited_facts(result, grounding.fact_passages, len(given))
        cited = [*(given[n - 1] for n in result.cited),
                 *(Citation(c["n"], c["url"], c["title"]) for c in facts)]
        if strip_citations(result.text) == strip_citations(q["answer"]) and \
                {c.url for c in cited} == {c["url"] for c in q["citations"]}:
            continue
        answer = Answer(result.text, cited, grounded=result.grounded, evidence=given)
        score = score_answer(items[q["id"]], answer, site)
        out.append(Regrounded(q["id"], q["question"], q["answer"], result.text, q["score"],
                              score.score, tuple(c.kind for c in result.removed)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("report", type=Path, help="a gateway battery report (.json)")
    parser.add_argument("site", type=Path, help="a build of the site the report asked")
    parser.add_argument("--battery", default="v2", help="the battery the report ran (default v2)")
    args = parser.parse_args(argv)
    report = json.loads(args.report.read_text(encoding="utf-8"))
    changed = reground(report, args.site, args.battery)
    for r in changed:
        print(f"{r.id}: {r.score_before} -> {r.score_after} ({', '.join(r.kinds) or 'reworded'}) "
              f"| {r.question}\n  was: {r.before[:160]!r}\n  now: {r.after[:160]!r}")
    before = report["summary"]["score"]
    delta = sum(r.score_after - r.score_before for r in changed)
    print(f"{len(changed)} of {len(report['questions'])} answers changed; "
          f"score {before} -> {before + delta} of {report['summary']['max_score']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
