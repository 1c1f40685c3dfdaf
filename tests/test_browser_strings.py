"""The box's fixed strings (site_knowledge/browser/strings.js) in the page's language, in real
Chromium against a real build of a German site on MkDocs' theme (``locale: de``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_sites import build, require_browser, run_node

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = {
    "index.md": "# Leuchtturm\n\nDer Leuchtturm von Brisk Point wurde 1987 automatisiert. Seine "
    "Lampe blinkt alle zehn Sekunden weiß.\n",
    "besuch.md": "# Besuch\n\nDer Turm ist von Mai bis September samstags geöffnet. Eine Karte "
    "kostet vier Euro.\n",
}


@pytest.fixture(scope="module")
def german_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_browser()
    workdir = tmp_path_factory.mktemp("de")
    (workdir / "docs").mkdir()
    for name, text in PAGES.items():
        (workdir / "docs" / name).write_text(text, encoding="utf-8")
    config = {"site_name": "Leuchtturm", "plugins": ["site-knowledge"],
              "theme": {"name": "mkdocs", "locale": "de", "highlightjs": False}}
    return build(config, workdir)


def test_the_box_speaks_the_page_language(german_site: Path) -> None:
    seen = run_node("scenarios.mjs", "page_language", str(german_site),
                    "Wie backe ich ein Brot mit Walnüssen und Hefe?")
    assert seen["offsite"] == []
    assert seen["lang"] == "de"
    assert seen["button"] == "Diese Website fragen"
    assert seen["title"] == "Diese Website fragen" and seen["submit"] == "Fragen"
    assert seen["answer"]["refused"] is True
    assert "Das wird auf dieser Website (Leuchtturm) nicht behandelt" in seen["answer"]["text"]
