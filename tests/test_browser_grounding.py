"""The browser's grounding and prompt builder are the Python ones: their node tests read the
shared vectors the Python reference wrote (tests/data/grounding_vectors.json and
prompt_vectors.json). The chat box's use of them runs in real Chromium in
tests/test_browser_box.py and tests/test_browser_gateway.py."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from browser_sites import BROWSER_TESTS, REPO

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node missing (scripts/setup_browser.sh)")


@needs_node
@pytest.mark.parametrize("suite", ["grounding.test.mjs", "prompt.test.mjs"])
def test_shared_vectors_node(suite: str) -> None:
    done = subprocess.run(
        [str(NODE), "--test", str(BROWSER_TESTS / suite)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
