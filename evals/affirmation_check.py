"""How the checks of answers that affirm a premise (site_knowledge/grounding/affirmation.py) do
on every site, without a model, so that the figures isolate the checks from generation.

**Yeses.** ``evals/polar/questions.jsonl`` holds 85 yes/no questions written from the four
sites' pages (12 true and 8 false premises each, with the quote that settles each, and five
that ask whether something still holds: two true and two false on the example, one false on
drf-docs). Each
question is searched as the gateway searches it (hybrid, the gate open, the gateway's four
passages under its evidence budget) and grounded with the answer a model that always agrees
would write ("Yes.") and with a restatement of the question. A right yes stopped is a false
alarm; a wrong yes stopped is a catch.

**Restated premises.** For every question of the retrieval sets (battery v2 on the example,
each corpus's own set) that is not yes/no and names at least two things besides the site's
own name, whether one window of its evidence holds them all. Where none does, an answer that
restates them is replaced: on an answerable question that is the most false alarms the check
can raise; on a false premise, the most it can catch.

    .venv/bin/python -m evals.affirmation_check [--site NAME]... [--sites DIR [--reuse]] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evals.retrieval_sets import SETS
from evals.sites import SITES, build, build_arguments, parse_build_arguments
from site_knowledge.retrieval.gate import OPEN_GATE

if TYPE_CHECKING:
    from site_knowledge.gateway.prompt import Evidence
    from site_knowledge.grounding import Passage
    from site_knowledge.grounding.site import SiteGrounding

QUESTIONS = Path(__file__).resolve().parent / "polar" / "questions.jsonl"
PASSAGES = 4
"""The gateway's default evidence count (``--passages``)."""
PREMISE_SETS = tuple(s for s in SETS if s.name != "battery-v1")
"""One question set per site: battery v2 on the example, each corpus's own."""
TRUE_KINDS = frozenset({"lookup", "paraphrase", "multi_passage", "synthesis", "must_not_refuse"})
"""Question kinds whose premise the site holds."""


@dataclass(frozen=True)
class Polar:
    """One yes/no question and whether the site's answer is yes."""

    site: str
    question: str
    yes: bool
    quote: str
    """Words from the page that settle it."""


@dataclass(frozen=True)
class Outcome:
    """What the yes check did with one question's two agreeing answers."""

    item: Polar
    stopped_yes: bool
    stopped_restatement: bool
    quote_seen: bool
    """The settling quote was in the evidence the check read."""


@dataclass(frozen=True)
class Premises:
    """Restated premises on one question set: questions with two names or more, and of them
    those whose names no window holds together, for true and for false premises."""

    name: str
    true_named: int
    true_unconfirmed: list[str]
    false_named: int
    false_unconfirmed: list[str]


class SiteReader:
    """A built site's index, grounding and evidence, as the gateway reads them."""

    def __init__(self, site_dir: Path) -> None:
        from site_knowledge.gateway.prompt import Budgets
        from site_knowledge.grounding.site import SiteGrounding
        from site_knowledge.retrieval import KnowledgeIndex
        from site_knowledge.retrieval.artifact import load_artifact

        artifact, blob = load_artifact(site_dir)
        self.index = KnowledgeIndex({**artifact, "gate": OPEN_GATE}, blob)
        self.grounding: SiteGrounding = SiteGrounding(self.index)
        self.budgets = Budgets.from_artifact(artifact)

    def given(self, question: str) -> list[Evidence]:
        """The numbered evidence the gateway would give the model for the question."""
        from site_knowledge.gateway.prompt import by_characters, evidence_from_hits

        hits = self.index.search(question, (), mode="hybrid", top_k=PASSAGES).hits
        return by_characters((), evidence_from_hits(hits), self.budgets)[1]

    def evidence(self, question: str) -> list[Passage]:
        """The passages the gateway would give the model for the question."""
        return [e.passage() for e in self.given(question)]


def load(path: Path = QUESTIONS) -> list[Polar]:
    """The question file's items."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [Polar(r["site"], r["question"], r["answer"] == "yes", r["evidence"]) for r in rows]


def restatement(question: str) -> str:
    """The question as a statement, the way a small model agrees ("Is X Y?" -> "X Y.")."""
    from site_knowledge.grounding.affirmation import POLAR

    polar = POLAR.search(question)
    return question[polar.end() if polar else 0:].strip().rstrip("?").strip() + "."


def check_yeses(reader: SiteReader, items: Sequence[Polar]) -> list[Outcome]:
    """Ground both agreeing answers to each yes/no question."""
    out: list[Outcome] = []
    for item in items:
        evidence = reader.evidence(item.question)
        yes, restated = (any(c.kind == "affirmation" for c in reader.grounding.ground(
            answer, item.question, evidence).removed)
                         for answer in ("Yes.", restatement(item.question)))
        out.append(Outcome(item, yes, restated, _seen(item.quote, evidence)))
    return out


def check_premises(reader: SiteReader, name: str, questions: Path) -> Premises:
    """For each question of the set with two names or more, whether a window holds them."""
    from site_knowledge.evals.dataset import load_questions
    from site_knowledge.grounding.affirmation import holds_all, premise_names, windows

    grounding = reader.grounding
    counts: dict[bool, tuple[int, list[str]]] = {True: (0, []), False: (0, [])}
    for q in load_questions(questions):
        if q.kind not in TRUE_KINDS and q.kind != "false_premise":
            continue
        names = premise_names(q.question, reader.index.terms, grounding.site_terms)
        if not names:
            continue
        found, _ = windows(reader.evidence(q.question), grounding.facts, reader.index.terms)
        named, unconfirmed = counts[q.kind in TRUE_KINDS]
        if not any(holds_all(names, w) for w in found):
            unconfirmed.append(q.question)
        counts[q.kind in TRUE_KINDS] = (named + 1, unconfirmed)
    return Premises(name, *counts[True], *counts[False])


def _seen(quote: str, evidence: Sequence[Passage]) -> bool:
    """The quote's words, in order, are in one of the passages (markup and spacing aside)."""
    words = " ".join(re.findall(r"\w+", quote.lower()))
    return any(words in " ".join(re.findall(r"\w+", p.text.lower())) for p in evidence)


def yes_table(outcomes: Sequence[Outcome]) -> str:
    """A Markdown table per site: right yeses stopped (false alarms, and how many of them the
    evidence held the answer to), wrong yeses stopped."""
    lines = ["| site | right yes stopped (false alarm) | of them with the answer in the evidence "
             "| wrong yes stopped (catch) |", "|---|---|---|---|"]
    for site in dict.fromkeys(o.item.site for o in outcomes):
        mine = [o for o in outcomes if o.item.site == site]
        right = [o for o in mine if o.item.yes]
        wrong = [o for o in mine if not o.item.yes]

        def share(group: list[Outcome]) -> str:
            yes = sum(o.stopped_yes for o in group)
            restated = sum(o.stopped_restatement for o in group)
            return f"{yes}/{len(group)} (restated: {restated}/{len(group)})"

        seen = sum(o.stopped_yes and o.quote_seen for o in right)
        lines.append(f"| {site} | {share(right)} | {seen} | {share(wrong)} |")
    return "\n".join(lines)


def yes_details(outcomes: Sequence[Outcome]) -> str:
    """Every yes/no question the check got wrong, to read."""
    rows = [f"- {o.item.site}: {'false alarm' if o.item.yes else 'missed'} "
            f"({'yes' if o.stopped_yes else '-'}/{'restated' if o.stopped_restatement else '-'}"
            f"{'' if o.quote_seen else ', answer not in the evidence'}): {o.item.question}"
            for o in outcomes if (o.item.yes and (o.stopped_yes or o.stopped_restatement))
            or (not o.item.yes and not o.stopped_yes)]
    return "\n".join(rows)


def premise_table(results: Sequence[Premises]) -> str:
    """A Markdown table per set, then the questions whose names no window holds together."""
    lines = ["| set | answerable, two names or more | no window holds them (most false alarms) "
             "| false premises, two names or more | no window holds them (most catches) |",
             "|---|---|---|---|---|"]
    lines += [f"| {r.name} | {r.true_named} | {len(r.true_unconfirmed)} | {r.false_named} | "
              f"{len(r.false_unconfirmed)} |" for r in results]
    lines += ["", "Answerable questions whose names no window holds together:", ""]
    lines += [f"- {r.name}: {q}" for r in results for q in r.true_unconfirmed]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--site", choices=sorted(SITES), action="append",
                        help="only these sites (repeatable; default: all)")
    build_arguments(parser)
    parser.add_argument("--out", type=Path, help="also write the report here (Markdown)")
    args = parse_build_arguments(parser, argv)
    items = load()
    names = args.site or list(SITES)
    outcomes: list[Outcome] = []
    premises: list[Premises] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.sites or Path(tmp)
        for name in names:
            site_dir = root / name
            if not args.reuse:
                build(SITES[name], site_dir, chat=False)
            reader = SiteReader(site_dir)
            outcomes += check_yeses(reader, [i for i in items if i.site == name])
            premises += [check_premises(reader, s.name, s.questions)
                         for s in PREMISE_SETS if s.site == name]
    report = (f"## Yeses\n\n{yes_table(outcomes)}\n\nWhere the check was wrong:\n\n"
              f"{yes_details(outcomes)}\n\n## Restated premises\n\n{premise_table(premises)}\n")
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
