"""A page view of the deployed example asks nobody but the site and its configured gateway:
no Google Fonts, no CDN. Real Chromium records every request it makes, including those the
harness blocks (anything off this machine); the site is built as the Pages workflow builds
it, with ``SITE_KNOWLEDGE_GATEWAY`` naming a public gateway."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from browser_sites import require_browser, run_node
from sites import build_site, copy_example

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GATEWAY = "https://ask.teo.example"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def test_page_views_request_only_the_site_and_its_gateway(tmp_path, monkeypatch) -> None:
    require_browser()
    monkeypatch.setenv("SITE_KNOWLEDGE_GATEWAY", GATEWAY + "/")
    monkeypatch.delenv("SITE_KNOWLEDGE_SITE_URL", raising=False)
    site = build_site(copy_example(tmp_path / "src"), tmp_path / "site").site_dir
    post = next(p for p in sorted((site / "blog").glob("20*/**/index.html")))
    pages = ["", "cv/", "blog/", post.parent.relative_to(site).as_posix() + "/", "status/"]

    result = run_node("deploy.mjs", "page_views", json.dumps({"siteDir": str(site),
                                                               "pages": pages}))
    assert result["results"] > 0, "the box searched the artifact"
    assert result["missing"] == []
    requests = [u for u in result["requests"] if urlsplit(u).scheme in ("http", "https")]
    assert len(requests) > 20
    origins = {_origin(u) for u in requests}
    assert origins == {_origin(result["site"]), GATEWAY}, sorted(origins)
    to_gateway = {urlsplit(u).path for u in requests if _origin(u) == GATEWAY}
    assert to_gateway == {"/healthz", "/metrics"}, "the box probes it; the status page reads it"
