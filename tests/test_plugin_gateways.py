"""Deployed pages carry no loopback gateway: the example's gateway list comes from
``SITE_KNOWLEDGE_GATEWAY`` (``!ENV`` in mkdocs.yml, comma-separated), a build without it names
no gateway and loads no Google Fonts, and a public site built with a loopback gateway warns."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from mkdocs.config import load_config
from mkdocs.config.base import ValidationError
from sites import build_site

from site_knowledge.plugin.gateways import GatewayList, loopback_gateways

LOOPBACK_URL = re.compile(r"https?://(?:127\.\d+\.\d+\.\d+|localhost|\[::1?\]|0\.0\.0\.0)\b")
THIRD_PARTY_FONTS = ("fonts.googleapis.com", "fonts.gstatic.com")
ENV = ("SITE_KNOWLEDGE_GATEWAY", "SITE_KNOWLEDGE_SITE_URL")


@pytest.mark.parametrize(("value", "urls"), [
    (None, []),
    ([], []),
    ("", []),
    ("https://ask.example.org", ["https://ask.example.org"]),
    (" https://a.example/ , http://b.example:8787 ,", ["https://a.example/",
                                                        "http://b.example:8787"]),
    (["https://a.example", "https://b.example"], ["https://a.example", "https://b.example"]),
])
def test_gateway_list_accepts_a_list_or_a_comma_separated_string(value, urls) -> None:
    assert GatewayList().validate(value) == urls


@pytest.mark.parametrize("bad", ["ask.example.org", "ftp://ask.example.org", "https://",
                                 "https://ok.example, /relative"])
def test_gateway_list_names_a_bad_url(bad: str) -> None:
    with pytest.raises(ValidationError, match="is not an http\\(s\\) URL with a host"):
        GatewayList().validate(bad)


@pytest.mark.parametrize(("site_url", "gateways", "flagged"), [
    ("https://teo.github.io/", ["http://127.0.0.1:8787"], ["http://127.0.0.1:8787"]),
    ("https://teo.github.io/", ["https://ask.teo.example", "http://localhost:8787/"],
     ["http://localhost:8787/"]),
    ("https://teo.github.io/", ["http://[::1]:8787", "http://0.0.0.0:8787"],
     ["http://[::1]:8787", "http://0.0.0.0:8787"]),
    ("https://teo.github.io/", ["https://ask.teo.example"], []),
    ("http://127.0.0.1:8000/", ["http://127.0.0.1:8787"], []),
    ("http://docs.localhost:8000/", ["http://127.0.0.1:8787"], []),
    (None, ["http://127.0.0.1:8787"], []),
])
def test_loopback_gateways_on_public_sites(site_url, gateways, flagged) -> None:
    assert loopback_gateways(site_url, gateways) == flagged


def _configured(config_file: Path, caplog: pytest.LogCaptureFixture) -> tuple[list[str], list[str]]:
    """Load the example's mkdocs.yml as MkDocs does and run the plugins' on_config."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.site_knowledge"):
        config = load_config(str(config_file))
        config.plugins.on_config(config)
    gateways = list(config.plugins["site-knowledge"].config.gateways)
    return gateways, [r.getMessage() for r in caplog.records]


def test_example_gateways_come_from_the_environment(example_copy, monkeypatch, caplog) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    assert _configured(example_copy, caplog) == ([], [])

    monkeypatch.setenv("SITE_KNOWLEDGE_GATEWAY", "https://ask.teo.example, https://b.example")
    assert _configured(example_copy, caplog) == (["https://ask.teo.example", "https://b.example"],
                                                 [])
    monkeypatch.setenv("SITE_KNOWLEDGE_GATEWAY", "")
    assert _configured(example_copy, caplog) == ([], [])

    monkeypatch.setenv("SITE_KNOWLEDGE_GATEWAY", "http://127.0.0.1:8787")
    gateways, warnings = _configured(example_copy, caplog)
    assert gateways == ["http://127.0.0.1:8787"]
    assert len(warnings) == 1
    assert "http://127.0.0.1:8787" in warnings[0]
    assert "https://example.github.io/site-knowledge/" in warnings[0]

    monkeypatch.setenv("SITE_KNOWLEDGE_SITE_URL", "http://127.0.0.1:8000/")
    assert _configured(example_copy, caplog) == (["http://127.0.0.1:8787"], [])


def test_example_built_without_a_gateway_names_none_and_loads_no_google_fonts(
        example_copy, tmp_path, monkeypatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    site = build_site(example_copy, tmp_path / "site").site_dir
    texts = [p for p in site.rglob("*") if p.suffix in (".html", ".js", ".css", ".json", ".xml")]
    assert len(texts) > 20
    for path in texts:
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(site)
        assert not LOOPBACK_URL.search(text), f"{where}: {LOOPBACK_URL.search(text)}"
        for host in THIRD_PARTY_FONTS:
            assert host not in text, f"{where} loads {host}"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert '"gateways":[]' in index
