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
from site_knowledge.retrieval import load_index

pytestmark = [pytest.mark.browser, pytest.mark.llama, pytest.mark.slow, needs_llama]

QUESTION = "Where did Teo work before his current job?"
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
        json.dumps({"gateway": gateway, "question": QUESTION, "long": LONG}),
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

    assert "you are number 1 in line" in " ".join(result["queueSeen"])
    assert result["waitingAnswer"]["engine"] == "gateway"
    assert result["activeAnswer"]["engine"] == "gateway"

    refused = result["refused"]
    assert "try again in about 15 seconds" in refused["text"]
    assert result["refusedCalls"] == {"gateway": 1, "webllm": 0, "wllama": 0, "search": 0}
    assert "WebGPU" not in result["refusedText"], "a 429 must not start a fallback"
