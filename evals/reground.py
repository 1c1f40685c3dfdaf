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
from typing import TYPE_CHECKING, Any

from site_knowledge.evals.scorer import Answer, Citation, score_answer

if TYPE_CHECKING:
    from site_knowledge.grounding.evidence import Passage
    from site_knowledge.retrieval import KnowledgeIndex

_SEARCH_DEPTH = 12
"""How deep today's retrieval is read to tell apart an older report's passages of one heading."""


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


@dataclass(frozen=True)
class Figures:
    """A report's figures for issue 32, from its answers scored with today's scorer."""

    score: int
    max_score: int
    facts_present: float | None
    cited: int
    of: int
    answered: float | None
    refused_when_due: float | None
    injections_obeyed: tuple[str, ...]

    def row(self) -> str:
        """The figures as one line of text."""
        def pct(v: float | None) -> str:
            return "n/a" if v is None else f"{100 * v:.0f}%"
        return (f"score {self.score}/{self.max_score}, facts present {pct(self.facts_present)}, "
                f"cited {self.cited}/{self.of}, answered {pct(self.answered)}, refused when due "
                f"{pct(self.refused_when_due)}, injections obeyed {len(self.injections_obeyed)}")


def _passage_ids(q: dict[str, Any], keys: dict[tuple[str, str], list[str]],
                 index: KnowledgeIndex) -> list[str]:
    """The ids of the passages a stored answer's model was given ("" for one not found).

    A report names each passage by id; an older one by URL and title, which the passages of a
    heading split in several share: of those, the one today's retrieval ranks for the question
    is taken (it ranks at most one passage of a page), and none when it ranks none of them."""
    ids = []
    hits: list[str] | None = None
    for c in q["evidence"] or ():
        found = [c["id"]] if c.get("id") else keys.get((c["url"], c["title"]), [])
        if len(found) > 1:
            if hits is None:
                history = [turn["question"] for turn in q.get("history") or ()]
                result = index.search(q.get("standalone") or q["question"], history,
                                      top_k=_SEARCH_DEPTH)
                hits = [h.passage.id for h in result.hits]
            found = [i for i in hits if i in found]
        ids.append(found[0] if found else "")
    return ids


def _grounded_again(report: dict[str, Any], site_dir: Path
                    ) -> dict[str, tuple[Answer, tuple[str, ...]]]:
    """Today's grounding of each stored streamed answer whose visible text or cited pages it
    changes, as the gateway would send it, with the kinds of claim it removed."""
    from site_knowledge.gateway.answer import cited_facts
    from site_knowledge.gateway.prompt import evidence_of, strip_citations
    from site_knowledge.grounding.site import SiteGrounding
    from site_knowledge.retrieval import KnowledgeIndex
    from site_knowledge.retrieval.artifact import load_artifact

    artifact, blob = load_artifact(site_dir)
    index = KnowledgeIndex(artifact, blob)
    grounding = SiteGrounding(index)
    passages: dict[str, Passage] = {}
    keys: dict[tuple[str, str], list[str]] = {}
    for p in index.passages:
        e = evidence_of(0, index.sources_by_id[p.source_id], p)
        passages[e.passage_id] = e.passage()
        keys.setdefault((e.url, e.label()), []).append(e.passage_id)
    out: dict[str, tuple[Answer, tuple[str, ...]]] = {}
    for q in report["questions"]:
        evidence = [passages.get(i) for i in _passage_ids(q, keys, index)]
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
        answer = Answer(result.text, cited, refused=result.declined is not None,
                        grounded=result.grounded, evidence=given)
        out[q["id"]] = answer, tuple(c.kind for c in result.removed)
    return out


def reground(report: dict[str, Any], site_dir: Path, battery: str = "v2") -> list[Regrounded]:
    """The report's answers that today's grounding changes (removes a claim from, or words
    differently), with both scores."""
    from site_knowledge.evals.dataset import load_battery
    from site_knowledge.evals.site import SiteIndex

    items = {i.id: i for i in load_battery(battery).items}
    site = SiteIndex.load(site_dir)
    questions = {q["id"]: q for q in report["questions"]}
    out: list[Regrounded] = []
    for qid, (answer, kinds) in _grounded_again(report, site_dir).items():
        q = questions[qid]
        score = score_answer(items[qid], answer, site)
        out.append(Regrounded(qid, q["question"], q["answer"], answer.text, q["score"],
                              score.score, kinds))
    return out


def figures(report: dict[str, Any], site_dir: Path, battery: str = "v2"
            ) -> tuple[Figures, Figures]:
    """The report's figures before (its stored answers) and after (today's grounding of them),
    both scored with today's scorer, so that only the grounding differs."""
    from site_knowledge.evals.dataset import load_battery
    from site_knowledge.evals.runner import acceptance, stored_answers, summary
    from site_knowledge.evals.site import SiteIndex

    items = {i.id: i for i in load_battery(battery).items}
    site = SiteIndex.load(site_dir)
    stored = stored_answers(report)
    changed = _grounded_again(report, site_dir)

    def of(answers: dict[str, Answer]) -> Figures:
        results = [(items[i], a, score_answer(items[i], a, site)) for i, a in answers.items()]
        total, accept = summary(results), acceptance(results, site, None)
        rates, citing = total["rates"], accept["answerable_citing_expected"]
        return Figures(total["score"], total["max_score"], rates["facts_present"],
                       citing["cited"] or 0, citing["of"], rates["answered"],
                       rates["refused_when_due"], tuple(accept["injections_obeyed"]))

    return of(stored), of({i: changed[i][0] if i in changed else a for i, a in stored.items()})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("report", type=Path, help="a gateway battery report (.json)")
    parser.add_argument("site", type=Path, help="a build of the site the report asked")
    parser.add_argument("--battery", default="v2", help="the battery the report ran (default v2)")
    parser.add_argument("--figures", action="store_true",
                        help="also print the figures (score, facts present, expected page cited, "
                             "answered, refused when due) of the stored and the regrounded answers")
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
    if args.figures:
        stored, today = figures(report, args.site, args.battery)
        print(f"stored:  {stored.row()}\ntoday:   {today.row()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
