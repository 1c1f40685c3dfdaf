"""The box in real Chromium on a corpus built with ``artifact: sharded``: it answers from the
shards, ranks and gates every question as it does from the single file, and fetches fewer
bytes (tests/browser/shards_box.mjs)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from browser_sites import REPO, require_browser, run_node

from site_knowledge.compiler.shards import MANIFEST_NAME, SHARD_DIR

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTIONS = REPO / "evals" / "drf-docs" / "questions.jsonl"
ASKED = 12


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from evals.sites import SITES, build

    require_browser()
    work = tmp_path_factory.mktemp("sharded")
    site = build(SITES["drf-docs"], work / "site", artifact="sharded")
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()[:ASKED]
    questions = work / "questions.json"
    questions.write_text(json.dumps([json.loads(line)["question"] for line in lines]))
    return run_node("shards_box.mjs", str(site), str(questions))


def test_the_box_answers_from_the_shards_alone(seen: dict[str, Any]) -> None:
    sharded = seen["sharded"]
    ours = [path for path in sharded["missing"] + sharded["offsite"] if "site-knowledge" in path]
    assert ours == []
    assert MANIFEST_NAME in sharded["files"]
    assert any(name.startswith(f"{SHARD_DIR}/") for name in sharded["files"])
    assert "site-knowledge.json" not in sharded["files"]
    assert sharded["answer"] == {"refused": False, "engine": "search",
                                 "citations": sharded["answer"]["citations"]}
    assert sharded["answer"]["citations"] >= 1


def test_the_shards_rank_and_gate_as_the_single_file(seen: dict[str, Any]) -> None:
    single = seen["single"]
    assert "site-knowledge.json" in single["files"]
    assert not any(name.startswith(f"{SHARD_DIR}/") for name in single["files"])
    pairs = list(zip(seen["sharded"]["asked"], single["asked"], strict=True))
    assert len(pairs) == ASKED
    for sharded, whole in pairs:
        assert (sharded["ids"], sharded["answerable"]) == (whole["ids"], whole["answerable"]), \
            sharded["question"]


def test_the_shards_cost_fewer_bytes_than_the_single_file(seen: dict[str, Any]) -> None:
    """The first question (opening included) fetches less than the single file, which comes
    whole with it; each later one fetches less than the first."""
    first, *later = (q["artifact_bytes"] for q in seen["sharded"]["asked"])
    single = [q["artifact_bytes"] for q in seen["single"]["asked"]]
    assert single[1:] == [0] * len(later)
    assert 0 < first < single[0]
    assert max(later) < first
