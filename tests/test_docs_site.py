"""The project's documentation (root ``mkdocs.yml``, ``docs/``) and the README.

A strict ``mkdocs build`` of the documentation with the plugin, its generated configuration
reference, and its chat box answering from its own pages in Chromium; the README's length and
links.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from browser_sites import REPO, require_browser, run_node

from site_knowledge.budgets import FIELD_HELP, Budget
from site_knowledge.plugin.options import SiteKnowledgeOptions, option_reference

README = REPO / "README.md"
README_MAX_LINES = 200
ON_TOPIC = "How do I put the gateway behind nginx with TLS?"
OFF_TOPIC = "What is the best recipe for banana bread with walnuts?"


@pytest.fixture(scope="module")
def docs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The documentation built with ``mkdocs build --strict``, as CI and the Pages workflow do."""
    site = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env.pop("SITE_KNOWLEDGE_GATEWAY", None)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", str(site)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return site


def test_every_option_has_a_description() -> None:
    """An option added to the schema without a description fails here (``option_reference``
    has no entry for it, or an empty one)."""
    schema = [name for name, _option in SiteKnowledgeOptions._schema]
    reference = option_reference()
    assert [doc.name for doc in reference] == schema
    for doc in reference:
        assert doc.description.strip(), f"option {doc.name!r} has no description"
        assert doc.type.strip(), f"option {doc.name!r} has no type"
    assert list(FIELD_HELP) == [field.name for field in fields(Budget)]
    assert all(text.strip() for text in FIELD_HELP.values())


@pytest.mark.slow
def test_strict_build_has_the_artifact_the_box_and_the_options(docs_site: Path) -> None:
    artifact = json.loads((docs_site / "assets/site-knowledge/site-knowledge.json").read_text())
    titles = {source["title"] for source in artifact["sources"]}
    assert {"Configuration", "The gateway", "Architecture"} <= titles
    pages = sorted(docs_site.glob("**/index.html"))
    assert len(pages) >= 10
    for page in pages:
        assert "site-knowledge/launcher.js" in page.read_text(encoding="utf-8"), page
    reference = (docs_site / "configuration/index.html").read_text(encoding="utf-8")
    assert "site-knowledge:options" not in reference, "the hook left its marker"
    for doc in option_reference():
        assert f"<code>{doc.name}</code>" in reference, doc.name
    for field in FIELD_HELP:
        assert f"<code>{field}</code>" in reference, field


@pytest.mark.slow
@pytest.mark.browser
def test_the_box_answers_from_the_documentation(docs_site: Path) -> None:
    """Search only (no gateway, no model): a question about the project is answered with the
    deployment page's passages as links; an off-topic one is refused by the gate."""
    require_browser()
    result = run_node("scenarios.mjs", "search_only", str(docs_site), json.dumps([ON_TOPIC, OFF_TOPIC]))
    assert result["offsite"] == []
    answer, refused = result["answers"]
    assert answer["engine"] == "search" and answer["refused"] is False
    assert answer["citations"][0]["path"].startswith("deployment/"), answer["citations"]
    assert "Deployment \u203a " in result["text"], "the box shows the deployment passage"
    assert refused["engine"] == "gate" and refused["refused"] is True


def test_readme_is_short_and_its_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'<img src="([^"]+)"', text)
    local = [t for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
    assert local, "the README links into the documentation"
    missing = [t for t in local if not (REPO / t.split("#", 1)[0]).exists()]
    assert missing == []
