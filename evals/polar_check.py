"""How the yes check (site_knowledge/grounding/affirmation.py) does on yes/no questions of
every site: which wrong yeses it stops and which right yeses it wrongly stops.

``evals/polar/questions.jsonl`` holds 80 yes/no questions written from the four sites' pages
(12 true and 8 false premises each, with the quote that settles each). Each site is built
with the plugin; each question is searched as the gateway searches it (hybrid, the gate
open, the gateway's four passages under its evidence budget), and the grounding is given
the answer a model that always agrees would write ("Yes.") and a restatement of the
question. A right yes that the check stops is a false alarm; a wrong yes it stops is a
catch. No model is involved, so the figures isolate the check from generation.

    .venv/bin/python evals/polar_check.py [--site NAME] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evals.sites import SITES, build
from site_knowledge.retrieval.gate import OPEN_GATE

if TYPE_CHECKING:
    from site_knowledge.grounding import Passage

QUESTIONS = Path(__file__).resolve().parent / "polar" / "questions.jsonl"
PASSAGES = 4
"""The gateway's default evidence count (``--passages``)."""
_AUXILIARY = re.compile(r"^(?:is|are|was|were|do|does|did|has|have|can|must|should|will)\s+",
                        re.IGNORECASE)


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
    """What the check did with one question's two agreeing answers."""

    item: Polar
    stopped_yes: bool
    stopped_restatement: bool
    quote_seen: bool
    """The settling quote was in the evidence the check read."""


def load(path: Path = QUESTIONS) -> list[Polar]:
    """The question file's items."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [Polar(r["site"], r["question"], r["answer"] == "yes", r["evidence"]) for r in rows]


def restatement(question: str) -> str:
    """The question as a statement, the way a small model agrees ("Is X Y?" -> "X Y.")."""
    return _AUXILIARY.sub("", question.strip()).rstrip("?").strip() + "."


def check_site(site_dir: Path, items: Sequence[Polar]) -> list[Outcome]:
    """Search each question in the built site and ground both agreeing answers."""
    from site_knowledge.gateway.prompt import Budgets, by_characters, evidence_from_hits
    from site_knowledge.grounding.site import SiteGrounding
    from site_knowledge.retrieval import KnowledgeIndex
    from site_knowledge.retrieval.artifact import load_artifact

    artifact, blob = load_artifact(site_dir)
    index = KnowledgeIndex({**artifact, "gate": OPEN_GATE}, blob)
    grounding = SiteGrounding(index)
    budgets = Budgets.from_artifact(artifact)
    out: list[Outcome] = []
    for item in items:
        hits = index.search(item.question, (), mode="hybrid", top_k=PASSAGES).hits
        _, kept = by_characters((), evidence_from_hits(hits), budgets)
        evidence = [e.passage() for e in kept]
        yes, restated = (any(c.kind == "affirmation"
                             for c in grounding.ground(answer, item.question, evidence).removed)
                         for answer in ("Yes.", restatement(item.question)))
        out.append(Outcome(item, yes, restated, _seen(item.quote, evidence)))
    return out


def _seen(quote: str, evidence: Sequence[Passage]) -> bool:
    """The quote's words, in order, are in one of the passages (markup and spacing aside)."""
    words = " ".join(re.findall(r"\w+", quote.lower()))
    return any(words in " ".join(re.findall(r"\w+", p.text.lower())) for p in evidence)


def table(outcomes: Sequence[Outcome]) -> str:
    """A Markdown table per site: right yeses stopped (false alarms; in brackets those whose
    settling quote the evidence held), wrong yeses stopped."""
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


def details(outcomes: Sequence[Outcome]) -> str:
    """Every question the check got wrong, to read."""
    rows = [f"- {o.item.site}: {'false alarm' if o.item.yes else 'missed'} "
            f"({'yes' if o.stopped_yes else '-'}/{'restated' if o.stopped_restatement else '-'}"
            f"{'' if o.quote_seen else ', answer not in the evidence'}): {o.item.question}"
            for o in outcomes if (o.item.yes and (o.stopped_yes or o.stopped_restatement))
            or (not o.item.yes and not o.stopped_yes)]
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", choices=sorted(SITES), action="append",
                        help="only these sites (repeatable; default: all four)")
    parser.add_argument("--out", type=Path, help="also write the report here (Markdown)")
    args = parser.parse_args(argv)
    items = load()
    names = args.site or list(dict.fromkeys(i.site for i in items))
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            site_dir = build(SITES[name], Path(tmp) / name, chat=False)
            outcomes += check_site(site_dir, [i for i in items if i.site == name])
    report = f"{table(outcomes)}\n\nWhere the check was wrong:\n\n{details(outcomes)}\n"
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
