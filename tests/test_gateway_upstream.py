"""Upstream replies that must never break the stream contract (finding 4 of issue 10).

The scripted upstream (``ScriptedUpstream``) gives what a real llama-server gives only while
loading (503 from ``/props``) or never (HTML with status 200, a JSON list, numbers as
strings); the real-server counterparts (loading, a hang) are in ``test_gateway_llama``.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from gateway_fixtures import ScriptedUpstream, ThreadedServer, ask, metrics

from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits

ANSWERABLE = "What is slotmeter?"
GENEROUS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)
BAD_PROPS = ["loading503", "html200", "list200", "string200", "nested200"]


@pytest.fixture
def fresh(scripted) -> Iterator[tuple[ScriptedUpstream, str]]:
    upstream, url = scripted
    yield upstream, url
    upstream.mode, upstream.props, upstream.count = "ok", "ok", None


@pytest.mark.parametrize("props", BAD_PROPS)
def test_an_upstream_that_cannot_say_its_slots_is_skipped_before_generation(
        example_index, fresh, props):
    _, good_url = fresh
    bad = ScriptedUpstream()
    bad.props = props
    with ThreadedServer(bad.app) as bad_server:
        config = GatewayConfig(upstreams=(bad_server.url, good_url), limits=GENEROUS)
        with ThreadedServer(create_app(example_index, config)) as server:
            stream = ask(server.url, ANSWERABLE)
            assert stream.terminal is not None and stream.terminal.get("done") is True
            assert metrics(server.url)["upstream"]["failovers"] == 1
    assert bad.requests == [], "nothing was generated there"


@pytest.mark.parametrize("props", BAD_PROPS)
def test_the_only_upstream_unable_to_say_its_slots_is_unavailable_and_health_says_so(
        example_index, fresh, props):
    upstream, url = fresh
    upstream.props = props
    config = GatewayConfig(upstreams=(url,), limits=GENEROUS)
    with ThreadedServer(create_app(example_index, config)) as server:
        stream = ask(server.url, ANSWERABLE)
        assert stream.terminal == {"error": {"code": "upstream_unavailable",
                                             "message": "No model server is available."}}
        health = httpx.get(server.url + "/healthz", timeout=10)
        assert health.status_code == 200 and health.json()["upstreams"] == [{"index": 0,
                                                                              "ok": True}]
        snap = metrics(server.url)
        assert snap["outcomes"]["failed"] == 1 and snap["queue"]["active"] == 0


@pytest.mark.parametrize("count", ["html200", "list200", "string200", "loading503", "nested200"])
def test_an_unreadable_token_count_falls_back_to_character_budgets(example_index, fresh, count):
    upstream, url = fresh
    upstream.count = count
    config = GatewayConfig(upstreams=(url,), limits=GENEROUS)
    with ThreadedServer(create_app(example_index, config)) as server:
        stream = ask(server.url, ANSWERABLE)
        assert stream.terminal is not None and stream.terminal.get("done") is True
    assert upstream.requests[-1]["messages"][-1]["content"].startswith("Excerpts from the site")
