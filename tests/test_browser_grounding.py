"""The browser's grounding (grounding.js, with pystr.js under it) is the Python grounding: its
node test reads the shared vectors the Python reference wrote
(tests/data/grounding_vectors.json). The chat box's use of it runs in real Chromium in
tests/test_browser_box.py and tests/test_browser_gateway.py."""

from __future__ import annotations

from browser_sites import run_node_tests


def test_shared_vectors_node() -> None:
    run_node_tests("grounding.test.mjs")
