"""The per-page walk of the fused order against the shared vectors the JavaScript twin reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from site_knowledge.retrieval.fusion import diverse_top

CASES = json.loads((Path(__file__).parent / "data" / "retrieval_vectors.json")
                   .read_text(encoding="utf-8"))["diverse"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_shared_diverse_top_vectors(case):
    scores = case.get("scores")
    score = scores.__getitem__ if scores else None
    assert diverse_top(case["order"], case["source_of"], case["top_k"], case["cap"],
                       case["lead"], case["capped"], score, case.get("lead_share", 0.0)) == case["kept"]


def test_one_lead_passage_is_the_plain_per_page_cap():
    order, source_of = [0, 1, 2, 3], [0, 0, 0, 1]
    assert diverse_top(order, source_of, 3, 1) == diverse_top(order, source_of, 3, 1, 1) == [0, 3, 1]
