"""Which page a declining answer's quote cites, on every site, without a model.

When an answer only declines, or grounding replaces it, the gateway and the box add the
evidence sentence closest to the question ("The closest it comes: … [n]",
site_knowledge/grounding/SPEC.md, "closest sentence"). For every answerable question without
history of the retrieval sets (battery v2 on the example, each corpus's own set), searched as
the gateway searches it, this counts how often the evidence holds an expected page, how often
the closest sentence cites one (any relevance), and how often the decline completion (its two
relevance thresholds, at any relevance after a denied premise about the site) quotes and
cites one; and, for the questions the site cannot answer that the gate lets through, how
often a decline of them would be followed by a quote (noise after a right decline).

    .venv/bin/python -m evals.quote_check [--sites DIR [--reuse]]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evals.affirmation_check import SiteReader
from evals.retrieval_sets import SETS, EvalSet
from evals.sites import SITES, build, build_arguments, parse_build_arguments


@dataclass(frozen=True)
class QuoteCounts:
    """One set's counts."""

    name: str
    questions: int
    evidence_expected: int
    quote_expected: int
    declines_quoted: int
    decline_quote_expected: int
    unanswerable_passed: int
    unanswerable_quoted: int


def check(eval_set: EvalSet, site_dir: Path) -> QuoteCounts:
    """Count, for the set's answerable questions without history, where the quotes point."""
    from site_knowledge.evals.dataset import load_questions
    from site_knowledge.evals.site import SiteIndex
    from site_knowledge.grounding.answer import Context, decline_note, nearest_note
    from site_knowledge.grounding.claims import Support

    reader = SiteReader(site_dir)
    site = SiteIndex.load(site_dir)
    grounding = reader.grounding
    questions = evidence_expected = quote_expected = declines_quoted = decline_expected = 0
    passed = unanswerable_quoted = 0
    for q in load_questions(eval_set.questions):
        if q.history:
            continue
        given = reader.given(q.question)
        context = Context([e.passage() for e in given], Support([], grounding.index.terms),
                          q.question, grounding.lexicon,
                          grounding.words.unknown_terms(q.question), grounding.facts,
                          grounding.site_terms)
        decline_quote = decline_note(context)
        if not q.expected:
            passed += bool(given)
            unanswerable_quoted += decline_quote is not None
            continue
        urls = [e.url for e in given]
        questions += 1
        evidence_expected += site.any_expected(urls, q.expected)
        quote_expected += site.any_expected(_cited(nearest_note(context), urls), q.expected)
        declines_quoted += decline_quote is not None
        decline_expected += site.any_expected(_cited(decline_quote, urls), q.expected)
    return QuoteCounts(eval_set.name, questions, evidence_expected, quote_expected,
                       declines_quoted, decline_expected, passed, unanswerable_quoted)


def _cited(note: tuple[str, int] | None, urls: Sequence[str]) -> list[str]:
    """The URL a nearest note cites, as a list (empty for no note)."""
    return [] if note is None else [urls[note[1] - 1]]


def table(rows: Sequence[QuoteCounts]) -> str:
    """The counts as a Markdown table."""
    lines = ["| set | answerable (no history) | evidence holds an expected page | closest "
             "sentence cites one | decline completion quotes | of which cite one | "
             "unanswerable, gate passed | decline completion quotes |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r.name} | {r.questions} | {r.evidence_expected} | {r.quote_expected} | "
              f"{r.declines_quoted} | {r.decline_quote_expected} | {r.unanswerable_passed} | "
              f"{r.unanswerable_quoted} |" for r in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    build_arguments(parser)
    args = parse_build_arguments(parser, argv)
    sets = [s for s in SETS if s.name != "battery-v1"]
    rows: list[QuoteCounts] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.sites or Path(tmp)
        for eval_set in sets:
            site_dir = root / eval_set.site
            if not args.reuse:
                build(SITES[eval_set.site], site_dir, chat=False)
            rows.append(check(eval_set, site_dir))
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
