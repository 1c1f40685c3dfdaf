"""The chat box as visitors use it (issue 36), in real Chromium against the real example site.

Scenarios live in tests/browser/box_ux.mjs; each test runs one and asserts on what it saw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_sites import build_example_site, require_browser, run_node

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_browser()
    return build_example_site(tmp_path_factory.mktemp("example"))


def scenario(name: str, site: Path, arg: str | None = None, **env: str) -> Any:
    return run_node("box_ux.mjs", name, str(site), *([arg] if arg else []), env=env)


def test_typing_in_the_box_never_scrolls_the_page(example_site: Path) -> None:
    result = scenario("typing", example_site)
    assert result["offsite"] == []
    assert result["pageHeight"] > 500, "the home page should be long enough to scroll"
    for case in (result["top"], result["middle"]):
        assert case["typed"] == "Where did he work?"
        assert case["afterOpen"] == case["before"], case
        assert set(case["ys"]) == {case["before"]}, case
    assert result["middle"]["before"] > 0
