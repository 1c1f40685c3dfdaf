"""The browser's prompt builder (prompt.js) lays prompts out as the gateway's prompt.py does:
its node test reads tests/data/prompt_vectors.json, which scripts/make_prompt_vectors.py writes
from prompt.py."""

from __future__ import annotations

from browser_sites import run_node_tests


def test_shared_vectors_node() -> None:
    run_node_tests("prompt.test.mjs")
