"""Grounding edits whole sentences: over every answer stored in every report under
``evals/reports/``, no sentence grounding keeps has a citation marker standing where a word
belongs ("The package is [1].", "introduces the idea in [1], while ..."), so no kept sentence
ends in a bare citation after a verb or a preposition, and none keeps a hole where a marker
was removed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from site_knowledge.grounding.text import CITATION, edited, sentences

REPORTS = Path(__file__).resolve().parent.parent / "evals" / "reports"
FUNCTION_WORD = (r"(?:is|are|was|were|be|been|in|at|on|of|to|by|with|for|from|into|via|the|a|an|"
                 r"called|named|titled|use|uses|using|see)")
BARE_CITATION = re.compile(rf"\b{FUNCTION_WORD}\s*(?:\[\d{{1,3}}\]\s*)+[.!?]?\s*$", re.IGNORECASE)
HOLE = re.compile(rf"\b{FUNCTION_WORD}\s*(?:\[\d{{1,3}}\]\s*)+(?:[,;:)]|\s+(?:and|or|but|while)\b)",
                  re.IGNORECASE)


def stored_answers() -> list[str]:
    """The model's own text of every stored answer (before any grounding of its day)."""
    out = []
    for path in sorted(REPORTS.glob("*.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        questions = report.get("questions", []) if isinstance(report, dict) else []
        for question in (q for q in questions if isinstance(q, dict)):
            text = question.get("streamed_answer") or question.get("answer")
            if isinstance(text, str) and text:
                out.append(text)
    return out


def test_no_kept_sentence_ends_in_a_bare_citation_or_keeps_a_hole() -> None:
    answers = stored_answers()
    assert len(answers) > 1000, "the reports hold the answers of many runs"
    kept = [s for a in answers for sentence in sentences(a) if (s := edited(sentence.text))]
    cited = [s for s in kept if CITATION.search(s)]
    assert len(cited) > 500
    assert [s for s in kept if BARE_CITATION.search(s) or HOLE.search(s)] == []


def test_the_stored_answers_do_hold_such_sentences_for_grounding_to_drop() -> None:
    raw = [s.text for a in stored_answers() for s in sentences(a)]
    assert any(BARE_CITATION.search(s) for s in raw), "the check would pass on anything"
