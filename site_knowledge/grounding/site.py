"""Grounding for one loaded knowledge index: its lexicon, its words, its stable facts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .answer import Context, Grounded, ground
from .attribution import Lexicon
from .claims import Support
from .evidence import Passage, heading_label
from .premises import correction, notice

if TYPE_CHECKING:
    from site_knowledge.retrieval import KnowledgeIndex
    from site_knowledge.retrieval.words import SiteWords


class SiteGrounding:
    """The grounding steps bound to one artifact: premise notices before generation,
    the claim check and attribution after it."""

    def __init__(self, index: KnowledgeIndex) -> None:
        self.index = index
        self.lexicon = Lexicon(index.terms, index.idf)
        prompt = index.artifact["prompt"]
        self.facts = str(prompt["system"]).replace(str(prompt.get("examples", "")), "")
        built = str(index.artifact.get("built_at", ""))
        self.reference_year = int(built[:4]) if built[:4].isdigit() else None
        self.site_terms = frozenset(index.terms(str(index.artifact["site"]["name"])))
        self.fact_passages = [
            Passage(heading_label(source.title, p.heading), p.text, url=p.url)
            for p in index.passages for source in [index.sources_by_id[p.source_id]]
            if source.kind == "ontology" and source.authority != "fiction"]
        """The passages of the structured facts the system prompt's facts are written from."""

    @property
    def words(self) -> SiteWords:
        return self.index.words

    def premise_notice(self, question: str) -> str:
        """"The site never mentions: …" for the question's words the site never uses, or ""."""
        return notice(self.words.unknown_terms(question))

    def refusal(self, question: str, refusal: str) -> str:
        """The gate's ``refusal``, opened by what the question names that the site never does
        ("The site does not mention Spotify."): a visitor learns why, and a false premise is
        corrected rather than declined."""
        return f"{correction(self.words.unknown_terms(question))} {refusal}".strip()

    def ground(self, answer: str, question: str, evidence: Sequence[Passage],
               check_claims: bool = True, premises: bool = True) -> Grounded:
        """Check an answer against ``evidence`` (the passages the model saw, numbered from 1)
        and the stable facts of the system prompt (a sentence only they hold is cited to one
        of ``fact_passages``). Without ``check_claims`` no sentence is removed; without
        ``premises`` no premise correction is added."""
        support = Support([*(p.whole for p in evidence if not p.fiction), self.facts],
                          self.index.terms, self.reference_year,
                          fiction=[p.whole for p in evidence if p.fiction])
        terms = self.words.unknown_terms(question) if premises else []
        context = Context(evidence, support, question, self.lexicon, terms, self.facts,
                          self.site_terms, self.fact_passages)
        return ground(answer, context, check_claims)
