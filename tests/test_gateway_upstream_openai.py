"""The ``openai`` upstream kind against a real llama-server's OpenAI endpoint alone (issue
34): an answer end to end over real HTTP and SSE with an API key, failover across mixed
kinds when the first upstream's process is killed, and a death mid-answer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from gateway_fixtures import (
    LLAMA_BINARY,
    MODEL,
    LogRecorder,
    ThreadedServer,
    ask,
    free_port,
    metrics,
    needs_llama,
    start_llama,
    stream_until_delta,
)

from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits, UpstreamSpec
from site_knowledge.gateway.upstream import Upstream
from site_knowledge.gateway.upstream_openai import TEMPLATE_TOKENS_PER_MESSAGE
from site_knowledge.llama.model import DEFAULT_MODEL_SHA256
from site_knowledge.llama.supervisor import LlamaServer, LlamaSpec

pytestmark = [pytest.mark.llama, pytest.mark.slow, needs_llama]

LIMITS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000,
                queue_wait_s=600.0)
QUESTION = "What is slotmeter and what did it measure?"
LONG_QUESTION = "Describe each of Teo's projects in detail, one paragraph per project."


def openai(server: LlamaServer, api_key: str | None = None) -> UpstreamSpec:
    """``server`` as the ``openai`` kind sees it: its OpenAI base URL, and its key."""
    return UpstreamSpec(server.spec.url + "/v1", "openai", api_key=api_key)


def llama_kind(server: LlamaServer) -> UpstreamSpec:
    return UpstreamSpec(server.spec.url)


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> Iterator[LlamaServer]:
    server = start_llama(tmp_path_factory.mktemp("llama") / "llama.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory) -> Iterator[LlamaServer]:
    """A llama-server that refuses every request without its API key but ``/health``."""
    assert LLAMA_BINARY is not None
    spec = LlamaSpec(binary=LLAMA_BINARY, model=MODEL, port=free_port(), threads=1,
                     cache_ram_mib=256)
    log = (tmp_path_factory.mktemp("keyed") / "llama.log").open("ab")
    server = LlamaServer(spec, DEFAULT_MODEL_SHA256, log=log)
    server.start(timeout_s=60)
    yield server
    server.stop()
    log.close()


def test_the_openai_kind_alone_answers_with_the_servers_api_key(example_index, keyed):
    """Nothing but ``/v1`` endpoints and ``/tokenize``: the answer streams, ends ``done``
    with citations, and its metrics sample says the cached tokens are unknown, not zero.
    The key is what lets the request through, and no log line holds it."""
    assert keyed.api_key is not None
    refused = httpx.post(keyed.spec.url + "/v1/chat/completions", timeout=10,
                         json={"messages": [{"role": "user", "content": "hi"}]})
    assert refused.status_code == 401
    config = GatewayConfig(upstreams=(openai(keyed, keyed.api_key),), limits=LIMITS,
                           token="s3cret")
    with LogRecorder() as recorder, ThreadedServer(create_app(example_index, config)) as server:
        health = httpx.get(server.url + "/healthz", timeout=10).json()
        stream = ask(server.url, QUESTION, headers={"authorization": "Bearer s3cret"})
        sample = metrics(server.url, token="s3cret")["samples"][-1]
    assert health["upstreams"] == [{"index": 0, "ok": True}]
    assert stream.status == 200 and stream.events[0].get("sources")
    assert stream.text.strip()
    assert stream.terminal is not None and stream.terminal["done"] is True
    assert stream.terminal["finish_reason"] in ("stop", "length")
    assert "cached_tokens" not in sample and "decode_tps" not in sample, "unknown, not zero"
    assert isinstance(sample["prompt_tokens"], int) and sample["output_tokens"] > 0
    assert keyed.api_key not in "\n".join(recorder.lines)
    assert keyed.api_key not in repr(config)


def test_without_the_key_the_openai_kind_is_refused_and_says_so(example_index, keyed):
    config = GatewayConfig(upstreams=(openai(keyed),), limits=LIMITS)
    with ThreadedServer(create_app(example_index, config)) as server:
        health = httpx.get(server.url + "/healthz", timeout=10).json()
        stream = ask(server.url, QUESTION)
    assert health["upstreams"] == [{"index": 0, "ok": False}]
    assert stream.terminal == {"error": {"code": "upstream_error",
                                         "message": "The model server refused (401)."}}


def test_tokenize_counts_the_prompt_without_ever_undercounting(llama):
    """The text-only ``/tokenize`` count plus the template allowance is at least the exact
    templated count (llama-server's ``/apply-template``), and close to it."""
    messages = [{"role": "system", "content": "You answer from the excerpts only."},
                {"role": "user", "content": "Excerpts from the site:\n\n[1] Slotmeter "
                                            "measures KV-cache slots.\n\nQuestion: What is it?"}]
    templated = httpx.post(llama.spec.url + "/apply-template", json={"messages": messages},
                           timeout=10).json()["prompt"]
    exact = len(httpx.post(llama.spec.url + "/tokenize", json={"content": templated},
                           timeout=10).json()["tokens"])

    async def count() -> tuple[int | None, int | None]:
        pool = Upstream((openai(llama),), LIMITS)
        try:
            return await pool.count_tokens(messages), await pool.count_tokens(messages)
        finally:
            await pool.aclose()

    first, again = asyncio.run(count())
    assert first == again
    assert first is not None
    assert exact <= first <= exact + TEMPLATE_TOKENS_PER_MESSAGE * (len(messages) + 1)


@pytest.mark.parametrize("first_kind, second_kind", [(openai, llama_kind), (llama_kind, openai)])
def test_two_upstreams_the_first_killed_the_second_answers(example_index, llama, tmp_path,
                                                           first_kind, second_kind):
    """Mixed kinds: the first upstream answers while it lives; once its process is killed,
    the question goes to the second before generation, and ``/healthz`` shows which is
    down."""
    first = start_llama(tmp_path / "first.log")
    try:
        config = GatewayConfig(upstreams=(first_kind(first), second_kind(llama)), limits=LIMITS)
        with ThreadedServer(create_app(example_index, config)) as server:
            before = ask(server.url, QUESTION)
            assert before.terminal is not None and before.terminal.get("done") is True
            assert metrics(server.url)["upstream"]["failovers"] == 0
            first.kill()
            after = ask(server.url, QUESTION)
            assert after.terminal is not None and after.terminal.get("done") is True
            assert after.text.strip()
            snap = metrics(server.url)
            health = httpx.get(server.url + "/healthz", timeout=10).json()
        assert snap["upstream"]["failovers"] == 1 and snap["upstream"]["requests"] == 2
        assert [u["ok"] for u in health["upstreams"]] == [False, True]
    finally:
        first.stop()


def test_killed_mid_answer_ends_with_one_error_and_no_retry_elsewhere(example_index, llama,
                                                                      tmp_path):
    """The first upstream (``openai`` kind) dies after its first delta: the answer ends with
    ``upstream_interrupted``, and the second upstream is never asked."""
    dying = start_llama(tmp_path / "dying.log")
    config = GatewayConfig(upstreams=(openai(dying), llama_kind(llama)), limits=LIMITS)
    try:
        with ThreadedServer(create_app(example_index, config)) as server:
            stream = stream_until_delta(server.url, LONG_QUESTION, dying.kill, timeout=120)
            snap = metrics(server.url)
        assert stream.terminal is not None
        assert stream.terminal["error"]["code"] == "upstream_interrupted"
        assert not any("done" in e for e in stream.events)
        assert snap["upstream"]["requests"] == 1 and snap["upstream"]["failovers"] == 0
        assert snap["outcomes"]["failed"] == 1
    finally:
        dying.stop()
