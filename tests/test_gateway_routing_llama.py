"""Source routing against a real llama-server with the real SmolLM2 GGUF: the gateway's
schema-constrained call on slot 0 comes back valid, the router's choice reaches the answer's
evidence and the ``done`` event, and slot 0 keeps the routing prompt's stable prefix cached.

llama-server runs with ``-t 1``; two or three routing calls and one short answer each.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from gateway_fixtures import ThreadedServer, ask, metrics, needs_llama, start_llama

from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits, Routing
from site_knowledge.gateway.routing import INTENTS
from site_knowledge.llama.supervisor import LlamaServer

pytestmark = [pytest.mark.llama, pytest.mark.slow, needs_llama]

LIMITS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)
TOKEN = "routing-test-token"
AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> Iterator[LlamaServer]:
    server = start_llama(tmp_path_factory.mktemp("llama") / "llama.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gateway(example_index, llama) -> Iterator[str]:
    config = GatewayConfig(upstreams=(llama.spec.url,), limits=LIMITS, routing=Routing(),
                           token=TOKEN)
    with ThreadedServer(create_app(example_index, config)) as server:
        yield server.url


def slot_tasks(llama: LlamaServer) -> dict[int, object]:
    """Each slot's last task id (absent for a slot that never ran one)."""
    slots = httpx.get(llama.spec.url + "/slots", timeout=10).json()
    return {int(s["id"]): s.get("id_task") for s in slots}


def test_the_schema_constrained_call_on_slot_0_routes_the_answer(gateway, llama, example_index):
    before = slot_tasks(llama)
    stream = ask(gateway, "What did slotmeter measure about llama.cpp prompt caching?",
                 headers=AUTH)
    done = stream.terminal
    assert done is not None and "route" in done, stream.events
    route = done["route"]
    seen = metrics(gateway, TOKEN)["routing"]
    assert sum(seen["outcomes"].values()) == 1
    assert not [o for o in seen["outcomes"] if o.startswith("invalid_")], (
        f"the real schema-constrained reply failed validation: {seen['outcomes']}")
    assert route["intent"] in INTENTS and "fallback" not in route
    assert set(route["source_ids"]) <= set(example_index.sources_by_id)
    tasks = slot_tasks(llama)
    assert tasks[0] != before[0], "the routing call runs on slot 0"
    if route["intent"] == "answer":
        assert done["finish_reason"] in ("stop", "length")
        assert tasks[1] != before[1], "the answer runs on slot 1"
        sources = next(e["sources"] for e in stream.events if "sources" in e)
        chosen = {p.url for p in example_index.passages if p.source_id in route["source_ids"]}
        assert sources and sources[0]["url"] in chosen, "evidence starts with a chosen source"
    else:
        assert done["finish_reason"] == "refused" and tasks[1] == before[1]


def test_slot_0_keeps_the_routing_prefix_cached(gateway):
    before = metrics(gateway, TOKEN)["routing"]
    ask(gateway, "Which cities has Teo lived in?", headers=AUTH)
    after = metrics(gateway, TOKEN)["routing"]
    assert sum(after["outcomes"].values()) == sum(before["outcomes"].values()) + 1
    # the first call found slot 0 cold; the second reused the stable system message
    assert before["cached_share"] in (0, None) or before["cached_share"] < after["cached_share"]
    assert after["cached_share"] is not None and after["cached_share"] > 0
    assert after["ttft_ms"]["p50"] is not None
