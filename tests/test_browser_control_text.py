"""The browser's control-text rule (control_text.js) is the gateway's: the same pattern,
verbatim, and the same output on tests/data/control_text_vectors.json."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from browser_sites import REPO, run_node_tests

from site_knowledge.gateway.control_text import CONTROL_SHAPE


def test_shared_vectors_node() -> None:
    run_node_tests("control_text.test.mjs")


def test_the_pattern_is_pythons_verbatim() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node missing (scripts/setup_browser.sh)")
    script = ("import('./site_knowledge/browser/control_text.js')"
              ".then((m) => process.stdout.write(m.CONTROL_SHAPE_SOURCE))")
    done = subprocess.run([node, "-e", script], cwd=REPO, capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout == CONTROL_SHAPE.pattern
    assert CONTROL_SHAPE.flags & ~32 == 0, "no flags beyond re.UNICODE (the twin has none)"
