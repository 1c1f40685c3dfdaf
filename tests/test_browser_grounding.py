"""The browser's grounding (grounding.js, with pystr.js under it) is the Python grounding: its
node test reads the shared vectors the Python reference wrote
(tests/data/grounding_vectors.json). The chat box's use of it runs in real Chromium in
tests/test_browser_box.py and tests/test_browser_gateway.py."""

from __future__ import annotations

from browser_sites import run_node, run_node_tests
from sites import BuiltSite

from site_knowledge.grounding.site import SiteGrounding
from site_knowledge.retrieval import KnowledgeIndex


def test_shared_vectors_node() -> None:
    run_node_tests("grounding.test.mjs")


def test_the_box_cites_the_same_fact_passages_as_the_gateway(example_site: BuiltSite) -> None:
    python = SiteGrounding(KnowledgeIndex.load(example_site.artifact_path)).fact_passages
    box = run_node("fact_passages.mjs", str(example_site.artifact_path))["passages"]
    assert box == [{"label": p.label, "text": p.text, "url": p.url} for p in python]
    assert any(p["url"].startswith("cv/#") for p in box) and len(box) > 20
