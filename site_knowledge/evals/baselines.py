"""The two baselines every battery report carries, as engines the scorer grades like any other.

- ``ConstantRefusal``: "The site doesn't say." to every question.
- ``GateOnly``: the compiler's gate and nothing else: its refusal where the gate refuses (with
  the engine's refusal flag, as the gateway sends it), no answer where it lets a question
  through.

A score means its margin over them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from site_knowledge.evals.scorer import Answer, Citation
from site_knowledge.evals.text import CONSTANT_REFUSAL

if TYPE_CHECKING:
    from site_knowledge.evals.dataset import Item
    from site_knowledge.retrieval import KnowledgeIndex

TOP_K = 4


class ConstantRefusal:
    """Declines everything, in words (no engine flag)."""

    name = "constant-refusal"

    def info(self) -> dict[str, Any]:
        """The answer it gives."""
        return {"answer": CONSTANT_REFUSAL}

    def ask(self, item: Item) -> Answer:
        """The same refusal, whatever the question."""
        return Answer(CONSTANT_REFUSAL, finish_reason="stop")


class GateOnly:
    """The gate's decision on the artifact's own index; no model."""

    name = "gate-only"

    def __init__(self, index: KnowledgeIndex) -> None:
        self.index = index

    def info(self) -> dict[str, Any]:
        """The gate's thresholds and calibration (not its reference vectors)."""
        return {"gate": {k: v for k, v in self.index.artifact["gate"].items() if k != "elsewhere"}}

    def ask(self, item: Item) -> Answer:
        """The gate's refusal, or an empty answer with the passages the gate let through."""
        history = [t.question for t in item.history]
        result = self.index.search(item.question, history=history, top_k=TOP_K)
        if not result.answerable:
            refusal = str(self.index.artifact["prompt"]["refusal"])
            return Answer(refusal, refused=True, finish_reason="refused", evidence=[])
        passages = [Citation(n, h.passage.url, h.source.title) for n, h in enumerate(result.hits, 1)]
        return Answer("", finish_reason="stop", evidence=passages)
