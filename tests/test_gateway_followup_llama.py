"""Follow-up rewriting against a real llama-server with the real SmolLM2 GGUF: the
schema-constrained rewrite on slot 0 comes back as JSON the gateway can read, and whatever
the model wrote, the answer is searched with the question the gateway settled on and the
earlier answer.

llama-server runs with ``-t 1``; one rewrite and one short answer.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from gateway_fixtures import ThreadedServer, ask, metrics, needs_llama, start_llama

from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.gateway.routing import spoken

pytestmark = [pytest.mark.llama, pytest.mark.slow, needs_llama]

LIMITS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)
HISTORY = [{"question": "Where did Teo work before Northwind Maps?",
            "answer": "At Kestrel Analytics in Berlin, as a Senior Software Engineer."}]
QUESTION = "What did he build there?"


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    server = start_llama(tmp_path_factory.mktemp("llama") / "llama.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gateway(example_index, llama) -> Iterator[str]:
    config = GatewayConfig(upstreams=(llama.spec.url,), limits=LIMITS)
    with ThreadedServer(create_app(example_index, config)) as server:
        yield server.url


def test_a_follow_up_is_rewritten_on_slot_0_and_searched_as_settled(gateway, llama,
                                                                     example_index):
    before = {int(s["id"]): s.get("id_task")
              for s in httpx.get(llama.spec.url + "/slots", timeout=10).json()}
    stream = ask(gateway, QUESTION, HISTORY)
    slots = {int(s["id"]): s.get("id_task")
             for s in httpx.get(llama.spec.url + "/slots", timeout=10).json()}
    assert slots[0] != before[0], "the rewrite runs on slot 0"
    outcomes = metrics(gateway)["followups"]["outcomes"]
    assert sum(outcomes.values()) == 1 and "failed" not in outcomes
    assert "rejected_malformed" not in outcomes, "the schema-bound reply is JSON"
    done = stream.terminal
    assert done is not None and done["finish_reason"] in ("stop", "length"), stream.events
    sources = [s["url"] for s in next(e["sources"] for e in stream.events if "sources" in e)]
    if "rewritten" in outcomes:
        settled = done["standalone"]
        assert settled != QUESTION and "buil" in settled.lower()
    else:
        assert "standalone" not in done
        settled = QUESTION
    found = example_index.search(settled, [spoken(HISTORY[0]["answer"])])
    if not found.answerable:
        found = example_index.search(QUESTION, [HISTORY[0]["question"]])
    assert sources == [h.passage.url for h in found.hits]
