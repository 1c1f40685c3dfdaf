"""The chat box against the real gateway in front of a real llama-server, in real Chromium.

The gateway admits one generation and one waiter here, so three tabs show the whole contract:
a streamed, cited answer; a queue position while another tab's answer is generating; and a 429
that shows a retry message and does not fall back to a browser model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_sites import build_example_site, require_browser, run_node
from gateway_fixtures import MODEL, ThreadedServer, free_port, needs_llama, start_llama

from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.grounding.answer import UNSUPPORTED
from site_knowledge.retrieval import load_index

pytestmark = [pytest.mark.browser, pytest.mark.llama, pytest.mark.slow, needs_llama]

QUESTION = "Where did Teo work before his current job?"
# SmolLM2-135M (Q4_1, greedy) invents an amount for each (1,085 and 2,000 euros here); the
# gateway's claim check replaces the answer. Two, so one model path diverging on another CPU
# still leaves one replaced answer to check.
INVENTS = ["How much did Teo's Portuguese course cost?", "What is Teo's salary?"]
UNGROUNDED_NOTE = "Part of this answer was removed: the site does not support it."
LONG = ("Tell me everything about Teo's career: each employer, the city, the years, what he "
        "built there and why he moved on.")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, int]]:
    require_browser()
    site = build_example_site(tmp_path_factory.mktemp("example-gw"))
    index = load_index(site)
    index.encoder  # noqa: B018  (load the encoder before the clock starts)
    site_port = free_port()
    llama = start_llama(tmp_path_factory.mktemp("llama") / "llama.log")
    config = GatewayConfig(
        upstreams=(llama.spec.url,),
        allow_origins=frozenset({f"http://127.0.0.1:{site_port}"}),
        limits=Limits(queue_waiters=1, visitor_requests_per_minute=10_000,
                      global_requests_per_minute=10_000),
        model=MODEL.name,
    )
    try:
        with ThreadedServer(create_app(index, config, model_sha256=llama.model_sha256)) as gw:
            yield site, gw.url + "/", site_port
    finally:
        llama.stop()


def test_streamed_cited_answer_queue_position_and_429(stack: tuple[Path, str, int]) -> None:
    site, gateway, port = stack
    result = run_node(
        "scenarios.mjs", "real_gateway", str(site),
        json.dumps({"gateway": gateway, "question": QUESTION, "long": LONG, "grounded": INVENTS}),
        env={"SK_SITE_PORT": str(port)},
    )
    assert result["offsite"] == []

    first = result["first"]
    assert first["engine"] == "gateway"
    assert first["text"].strip()
    assert first["sources"], "the passages the gateway used are listed under the answer"
    if re.search(r"\[\d+\]", first["text"]):
        assert first["citations"], "markers in the text become citation links"
    for link in first["citations"] + first["sources"]:
        assert link["url"].startswith(f"http://127.0.0.1:{port}/")
    assert result["steps"] >= 3, "the answer should arrive as a stream"
    assert "Answered by the site's answer server" in result["firstText"]

    replaced = []
    for seen in result["grounded"]:
        events = [json.loads(line[6:]) for line in seen["wire"].splitlines()
                  if line.startswith("data: ")]
        done = next(e for e in events if e.get("done"))
        streamed = "".join(e["delta"] for e in events if "delta" in e)
        answer = seen["answer"]
        assert answer["engine"] == "gateway"
        assert answer["grounded"] is done["grounded"]
        assert answer["text"] == done.get("text", streamed), "done's text replaces the stream"
        assert seen["shown"].strip() == answer["text"].strip()
        assert [c["title"] for c in answer["citations"]] == [c["title"] for c in done["citations"]]
        assert seen["note"] == (UNGROUNDED_NOTE if done["grounded"] is False else None)
        if done["grounded"] is False:
            replaced.append((streamed, answer["text"]))
    assert replaced, f"no answer needed grounding: {[g['answer']['text'] for g in result['grounded']]}"
    for streamed, shown in replaced:
        # Replaced whole, or the unsupported sentences removed and the rest kept.
        assert shown != streamed and (shown.startswith((UNSUPPORTED, "The site does not mention"))
                                      or len(shown) < len(streamed)), (streamed, shown)

    assert "you are number 1 in line" in " ".join(result["queueSeen"])
    assert result["waitingAnswer"]["engine"] == "gateway"
    assert result["activeAnswer"]["engine"] == "gateway"

    refused = result["refused"]
    assert "try again in about 15 seconds" in refused["text"]
    assert result["refusedCalls"] == {"gateway": 1, "webllm": 0, "wllama": 0, "search": 0}
    assert "WebGPU" not in result["refusedText"], "a 429 must not start a fallback"
