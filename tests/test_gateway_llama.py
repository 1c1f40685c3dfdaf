"""The gateway against a real llama-server with the real SmolLM2 GGUF, over real HTTP.

llama-server runs with ``-t 1``; a long, never-cached history keeps the answer slot busy
while the queue tests fill the waiting places.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from gateway_fixtures import (
    LLAMA_BINARY,
    MODEL,
    LogRecorder,
    Stream,
    ThreadedServer,
    ask,
    free_port,
    metrics,
    needs_llama,
    start_llama,
    stream_until_delta,
)

from site_knowledge.evals.engines import GatewayEngine
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.gateway.forwarding import ProxyTrust, parse_network
from site_knowledge.llama.model import ModelVerificationError
from site_knowledge.llama.supervisor import LlamaServer, LlamaSpec

pytestmark = [pytest.mark.llama, pytest.mark.slow, needs_llama]

# Waiters here wait for a cold few-thousand-token answer on one shared CPU thread, which can
# take longer than the default 60 s; the maximum wait has its own tests.
LIMITS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000,
                queue_wait_s=600.0)
QUESTION = "What is slotmeter and what did it measure?"
OFF_TOPIC = "What is the best recipe for banana bread?"
LONG_QUESTION = "Describe each of Teo's projects in detail, one paragraph per project."
ASKED: list[str] = []
ANSWERS: list[str] = []


def remember(question: str, stream: Stream) -> Stream:
    ASKED.append(question)
    if stream.text:
        ANSWERS.append(stream.text)
    return stream


@pytest.fixture(scope="module")
def recorder() -> Iterator[LogRecorder]:
    with LogRecorder() as rec:
        yield rec


@pytest.fixture(scope="module")
def llama(tmp_path_factory, recorder) -> Iterator[LlamaServer]:
    server = start_llama(tmp_path_factory.mktemp("llama") / "llama.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gateway(example_index, llama, recorder) -> Iterator[str]:
    """The gateway behind a trusted proxy (this test process), so that the queue tests can
    speak for several visitors through ``X-Forwarded-For``."""
    config = GatewayConfig(upstreams=(llama.spec.url,), limits=LIMITS, model=MODEL.name,
                           proxies=ProxyTrust((parse_network("127.0.0.1/32"),)))
    with ThreadedServer(create_app(example_index, config, model_sha256=llama.model_sha256)) as server:
        yield server.url


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.update(v for k, v in attrs if k == "id" and v)


def resolves(site_dir: Path, url: str) -> bool:
    """A site-root-relative URL names a built page and, with an anchor, an element on it."""
    path, _, anchor = url.partition("#")
    page = site_dir / path / "index.html" if not path or path.endswith("/") else site_dir / path
    if not page.is_file():
        return False
    if not anchor:
        return True
    parser = _Ids()
    parser.feed(page.read_text(encoding="utf-8"))
    return anchor in parser.ids



def test_a_started_gateway_reads_its_system_prompt_before_anyone_asks(example_index, tmp_path):
    """The startup primer against a fresh llama-server: the eval's gateway engine waits until
    /healthz says the system prompt is cached, before any question, and the first answer finds
    it in the answer slot's cache (its sample's cached_tokens, read with the gateway's
    token)."""
    server = start_llama(tmp_path / "llama.log")
    try:
        config = GatewayConfig(upstreams=(server.spec.url,), limits=LIMITS, model=MODEL.name,
                               token="s3cret")
        app = create_app(example_index, config, model_sha256=server.model_sha256)
        with ThreadedServer(app) as gateway_server:
            engine = GatewayEngine(gateway_server.url, token="s3cret")
            assert engine.info()["healthz"]["warmup"] == "done"
            engine.client.close()
            stream = ask(gateway_server.url, QUESTION, headers={"authorization": "Bearer s3cret"})
            assert stream.terminal is not None and stream.terminal.get("done") is True
            sample = metrics(gateway_server.url, token="s3cret")["samples"][-1]
        system = str(example_index.artifact["prompt"]["system"])
        tokens = httpx.post(server.spec.url + "/tokenize", json={"content": system}).json()
        assert sample["cached_tokens"] >= len(tokens["tokens"]) > 300
    finally:
        server.stop()


def test_question_streams_deltas_and_ends_with_resolvable_citations(gateway, example_site):
    before = metrics(gateway)["upstream"]["requests"]
    stream = remember(QUESTION, ask(gateway, QUESTION))
    assert stream.status == 200
    kinds = [next(iter(e)) for e in stream.events]
    assert kinds[0] == "sources" and kinds.count("delta") >= 2 and kinds[-1] == "done"
    sources = stream.events[0]["sources"]
    assert sources and all(resolves(example_site.site_dir, s["url"]) for s in sources)
    terminal = stream.terminal
    assert terminal is not None and terminal["finish_reason"] in ("stop", "length")
    assert terminal["model"] == MODEL.name, "the box's 'answered by' line names the model"
    assert all(c in sources for c in terminal["citations"])
    shown = terminal.get("text", stream.text)  # grounding may revise what was streamed
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", shown)}
    assert markers <= {c["n"] for c in terminal["citations"]}, "every marker shown resolves"
    assert isinstance(terminal["grounded"], bool)
    assert metrics(gateway)["upstream"]["requests"] == before + 1


def test_off_topic_is_refused_without_an_upstream_request(gateway, example_index):
    before = metrics(gateway)["upstream"]["requests"]
    stream = remember(OFF_TOPIC, ask(gateway, OFF_TOPIC))
    assert stream.text == example_index.artifact["prompt"]["refusal"]
    assert stream.terminal == {"done": True, "finish_reason": "refused", "citations": [],
                               "grounded": True, "refused": True, "refusal": "gate"}
    assert metrics(gateway)["upstream"]["requests"] == before


def test_healthz_reports_gateway_upstream_and_model(gateway, llama):
    health = httpx.get(gateway + "/healthz").json()
    assert health["status"] == "ok" and health["gateway"] == "ok"
    assert health["upstreams"] == [{"index": 0, "ok": True, "slots": 3}]
    assert health["model"] == {"name": MODEL.name, "sha256": llama.model_sha256}


def _long_history(nonce: str) -> list[dict[str, str]]:
    """Four exchanges nobody has sent before: a cold prompt of a few thousand tokens."""
    words = [f"{nonce}{i}x{j}" for i in range(4) for j in range(150)]
    return [{"question": "What projects has he built?",
             "answer": " ".join(words[i * 150:(i + 1) * 150])} for i in range(4)]


async def _open(url: str, body: dict[str, Any], visitor: str = "192.0.2.1"
                ) -> tuple[httpx.AsyncClient, httpx.Response]:
    """A streamed ask from ``visitor`` (named in ``X-Forwarded-For``)."""
    client = httpx.AsyncClient(timeout=120)
    response = await client.send(client.build_request(
        "POST", url + "/api/ask", json=body, headers={"x-forwarded-for": visitor}), stream=True)
    return client, response


async def _next_event(lines: Any) -> dict[str, Any]:
    async for line in lines:
        if line.startswith("data: "):
            event: dict[str, Any] = json.loads(line[6:])
            return event
    raise AssertionError("stream ended")


async def _metrics_until(url: str, check: Any, timeout: float = 10.0) -> dict[str, Any]:
    async with httpx.AsyncClient() as client:
        deadline = time.monotonic() + timeout
        while True:
            data: dict[str, Any] = (await client.get(url + "/metrics")).json()
            if check(data) or time.monotonic() > deadline:
                return data
            await asyncio.sleep(0.05)


def test_twelve_concurrent_requests_one_generates_ten_queue_one_refused(gateway):
    async def scenario() -> None:
        start = (await _metrics_until(gateway, lambda m: True))
        body_a = {"question": LONG_QUESTION, "history": _long_history(secrets.token_hex(3))}
        ASKED.append(LONG_QUESTION)
        client_a, active = await _open(gateway, body_a)
        lines_a = active.aiter_lines()
        assert (await _next_event(lines_a))["sources"], "the long question must pass the gate"
        waiters = []
        for position in range(1, 11):
            client, response = await _open(gateway, {"question": QUESTION},
                                           f"198.51.100.{position}")
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = response.aiter_lines()
            assert await _next_event(lines) == {"queued": {"position": position}}
            waiters.append((client, response, lines))
        async with httpx.AsyncClient() as client:
            full = await client.post(gateway + "/api/ask", json={"question": QUESTION},
                                     headers={"x-forwarded-for": "198.51.100.11"})
            # The queue is checked before retrieval: even a question the gate would refuse
            # at once costs no search while every place is taken.
            off_topic = await client.post(gateway + "/api/ask", json={"question": OFF_TOPIC},
                                          headers={"x-forwarded-for": "198.51.100.12"})
        assert full.status_code == 429 and full.headers["retry-after"] == "15"
        assert full.json()["error"]["code"] == "queue_full"
        assert off_topic.status_code == 429 and off_topic.json()["error"]["code"] == "queue_full"
        snap = (await _metrics_until(gateway, lambda m: True))
        assert snap["queue"]["active"] == 1 and snap["queue"]["waiting"] == 10

        client5, response5, _ = waiters.pop(4)
        await response5.aclose()
        await client5.aclose()
        snap = await _metrics_until(gateway, lambda m: m["queue"]["waiting"] == 9)
        assert snap["queue"]["waiting"] == 9
        assert snap["queue"]["left_waiting"] == start["queue"]["left_waiting"] + 1
        assert await _next_event(waiters[4][2]) == {"queued": {"position": 5}}

        for client, response, _ in waiters[1:]:
            await response.aclose()
            await client.aclose()
        snap = await _metrics_until(gateway, lambda m: m["queue"]["waiting"] == 1)
        assert snap["queue"]["waiting"] == 1

        terminal_a = await _terminal(lines_a)
        await client_a.aclose()
        assert terminal_a.get("done") is True
        _client1, _response1, lines1 = waiters[0]
        terminal_1 = await _terminal(lines1)
        await _client1.aclose()
        assert terminal_1.get("done") is True
        end = await _metrics_until(gateway, lambda m: True)
        # Two answers, and one follow-up rewrite: the long question carries history.
        rewrites = (sum(end["followups"]["outcomes"].values())
                    - sum(start["followups"]["outcomes"].values()))
        assert rewrites == 1
        assert end["upstream"]["requests"] == start["upstream"]["requests"] + 2 + rewrites

    asyncio.run(scenario())
    snap = asyncio.run(_metrics_until(gateway, lambda m: m["queue"]["active"] == 0))
    assert snap["queue"]["waiting"] == 0 and snap["queue"]["active"] == 0


def test_a_visitor_holds_at_most_its_share_of_open_streams(example_index, llama):
    """Event streams per visitor are capped (``visitor_streams``) apart from the queue's
    places: here 2 streams with 10 places allowed, the third gets 429 ``too_many_streams``,
    and once one ends the visitor may ask again."""
    limits = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000,
                    queue_wait_s=600.0, visitor_places=10, visitor_streams=2)
    config = GatewayConfig(upstreams=(llama.spec.url,), limits=limits)

    async def scenario(url: str) -> None:
        body = {"question": LONG_QUESTION, "history": _long_history(secrets.token_hex(3))}
        ASKED.append(LONG_QUESTION)
        first = await _open(url, body)
        first_lines = first[1].aiter_lines()  # held: dropping it would close the stream
        assert "sources" in await _next_event(first_lines)
        second = await _open(url, {"question": QUESTION})
        second_lines = second[1].aiter_lines()
        assert "queued" in await _next_event(second_lines)
        async with httpx.AsyncClient(timeout=30) as client:
            third = await client.post(url + "/api/ask", json={"question": QUESTION})
            assert third.status_code == 429, third.text
            assert third.json()["error"]["code"] == "too_many_streams"
            await second[1].aclose()
            await second[0].aclose()
            await asyncio.sleep(0.5)
            again = await _open(url, {"question": QUESTION})
            assert again[1].status_code == 200
            again_lines = again[1].aiter_lines()
            assert "queued" in await _next_event(again_lines)
        del first_lines, second_lines, again_lines
        for client, response in (first, again):
            await response.aclose()
            await client.aclose()

    with ThreadedServer(create_app(example_index, config)) as server:
        asyncio.run(scenario(server.url))


def test_one_visitors_burst_takes_only_its_share_of_the_queue(gateway):
    """A visitor holds at most ``visitor_places`` (2) places, active and waiting together:
    the rest of its burst gets 429 ``visitor_busy`` with ``Retry-After``, and another visitor
    is still admitted behind it."""
    async def scenario() -> None:
        body = {"question": LONG_QUESTION, "history": _long_history(secrets.token_hex(3))}
        ASKED.append(LONG_QUESTION)
        opened = [await _open(gateway, body, "203.0.113.5")]
        held = [opened[0][1].aiter_lines()]  # held: dropping one would close its stream
        assert "sources" in await _next_event(held[0])
        opened.append(await _open(gateway, {"question": QUESTION}, "203.0.113.5"))
        held.append(opened[1][1].aiter_lines())
        assert await _next_event(held[1]) == {"queued": {"position": 1}}
        async with httpx.AsyncClient(timeout=30) as client:
            burst = await asyncio.gather(*(client.post(
                gateway + "/api/ask", json={"question": QUESTION},
                headers={"x-forwarded-for": "203.0.113.5"}) for _ in range(5)))
        assert [r.status_code for r in burst] == [429] * 5
        assert {r.json()["error"]["code"] for r in burst} == {"visitor_busy"}
        assert all(int(r.headers["retry-after"]) >= 1 for r in burst)
        opened.append(await _open(gateway, {"question": QUESTION}, "203.0.113.6"))
        assert opened[2][1].status_code == 200
        held.append(opened[2][1].aiter_lines())
        assert await _next_event(held[2]) == {"queued": {"position": 2}}
        for client, response in opened:
            await response.aclose()
            await client.aclose()

    asyncio.run(scenario())
    snap = asyncio.run(_metrics_until(gateway, lambda m: m["queue"]["active"] == 0
                                      and m["queue"]["waiting"] == 0))
    assert snap["queue"] == {**snap["queue"], "active": 0, "waiting": 0}


async def _terminal(lines: Any) -> dict[str, Any]:
    text = ""
    async for line in lines:
        if line.startswith("data: "):
            event: dict[str, Any] = json.loads(line[6:])
            text += event.get("delta", "")
            if "done" in event or "error" in event:
                ANSWERS.append(text)
                return event
    raise AssertionError("EOF without a terminal event")


def _slot_busy(llama: LlamaServer, slot: int) -> bool:
    slots = httpx.get(llama.spec.url + "/slots", timeout=5).json()
    return bool(next(s for s in slots if s["id"] == slot)["is_processing"])


def test_client_disconnect_mid_answer_cancels_the_generation(gateway, llama):
    before = metrics(gateway)["outcomes"]["cancelled"]
    with httpx.Client(timeout=120) as client, client.stream(
        "POST", gateway + "/api/ask", json={"question": LONG_QUESTION}
    ) as response:
        ASKED.append(LONG_QUESTION)
        lines = response.iter_lines()  # held: dropping the iterator would close the response
        for line in lines:
            if line.startswith("data: ") and "delta" in json.loads(line[6:]):
                break
        assert _slot_busy(llama, 1)
        assert metrics(gateway)["queue"]["active"] == 1
    deadline = time.monotonic() + 5
    while _slot_busy(llama, 1) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _slot_busy(llama, 1)
    snap = metrics(gateway)
    assert snap["outcomes"]["cancelled"] == before + 1 and snap["queue"]["active"] == 0


def test_llama_killed_mid_stream_then_restarted(example_index, tmp_path, recorder):
    port = free_port()
    log = tmp_path / "llama.log"
    llama = start_llama(log, port=port)
    config = GatewayConfig(upstreams=(llama.spec.url,), limits=LIMITS)
    try:
        with ThreadedServer(create_app(example_index, config)) as server:
            ASKED.append(LONG_QUESTION)
            stream = stream_until_delta(server.url, LONG_QUESTION, llama.kill, timeout=120)
            assert stream.terminal is not None and "error" in stream.terminal
            assert not any("done" in e for e in stream.events)
            assert stream.terminal["error"]["code"] == "upstream_interrupted"

            llama = start_llama(log, port=port)
            again = remember(QUESTION, ask(server.url, QUESTION))
            assert again.terminal is not None and again.terminal.get("done") is True
            snap = metrics(server.url)
            assert snap["outcomes"]["failed"] == 1
            assert snap["outcomes"]["completed"] + snap["outcomes"]["truncated"] == 1
    finally:
        llama.stop()


def test_a_hung_llama_server_gets_heartbeats_then_the_deadline_and_frees_the_model(
        example_index, tmp_path):
    """SIGSTOP makes a real llama-server hang: the stream keeps getting heartbeat comments,
    ends at the generation deadline with one error event, and the model's place is free."""
    llama = start_llama(tmp_path / "llama.log")
    assert llama.process is not None
    limits = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000,
                    heartbeat_s=0.5, generation_s=4.0)
    config = GatewayConfig(upstreams=(llama.spec.url,), limits=limits)
    try:
        with ThreadedServer(create_app(example_index, config)) as server:
            health = httpx.get(server.url + "/healthz", timeout=10).json()
            assert health["upstreams"] == [{"index": 0, "ok": True, "slots": 3}]
            os.kill(llama.process.pid, signal.SIGSTOP)
            try:
                hung = remember(QUESTION, ask(server.url, QUESTION, timeout=60))
            finally:
                os.kill(llama.process.pid, signal.SIGCONT)
            assert hung.terminal == {"error": {
                "code": "generation_timeout",
                "message": "The model took too long to answer; try again."}}
            assert hung.comments >= 4, "heartbeats while no token came"
            assert not any("delta" in e for e in hung.events)
            snap = metrics(server.url)
            assert snap["queue"]["active"] == 0 and snap["outcomes"]["failed"] == 1
            # The next question takes the place at once (it may meet the 4 s deadline too
            # while llama-server, resumed, still works through the abandoned prompt).
            again = remember(QUESTION, ask(server.url, QUESTION))
            assert again.events[0].get("sources") and again.terminal is not None
            assert not any("queued" in e for e in again.events)
    finally:
        llama.stop()


def test_a_question_while_llama_server_loads_is_unavailable_never_broken(example_index,
                                                                         tmp_path):
    """Asked while a real llama-server is still loading its model (its /props answers 503
    before and after the question), the answer is a clean upstream_unavailable."""
    assert LLAMA_BINARY is not None
    for _attempt in range(3):
        spec = LlamaSpec(binary=LLAMA_BINARY, model=MODEL, port=free_port(), threads=1)
        process = subprocess.Popen(spec.command(), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        config = GatewayConfig(upstreams=(spec.url,), limits=LIMITS)
        try:
            with ThreadedServer(create_app(example_index, config)) as server:
                if not _props_status_becomes(spec.url, 503):
                    continue
                stream = ask(server.url, QUESTION)
                health = httpx.get(server.url + "/healthz", timeout=10).status_code
                if httpx.get(spec.url + "/props", timeout=5).status_code != 503:
                    continue  # it finished loading meanwhile: try again with a fresh one
                assert stream.terminal == {"error": {"code": "upstream_unavailable",
                                                     "message": "No model server is available."}}
                assert health == 503
                return
        finally:
            process.kill()
            process.wait()
    pytest.fail("llama-server never stayed loading long enough to ask it a question")


def _props_status_becomes(url: str, status: int, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/props", timeout=2).status_code == status:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.005)
    return False


def test_second_upstream_answers_when_the_first_is_down(example_index, llama):
    dead = f"http://127.0.0.1:{free_port()}"
    config = GatewayConfig(upstreams=(dead, llama.spec.url), limits=LIMITS)
    with ThreadedServer(create_app(example_index, config)) as server:
        stream = remember(QUESTION, ask(server.url, QUESTION))
        assert stream.terminal is not None and stream.terminal.get("done") is True
        snap = metrics(server.url)
        assert snap["upstream"]["failovers"] == 1 and snap["upstream"]["requests"] == 1


CONTROL_VECTORS = json.loads((Path(__file__).parent / "data" / "control_text_vectors.json")
                             .read_text(encoding="utf-8"))["vectors"]
SHAPE = re.compile(r"<[|\uff5c][^<>]*?[|\uff5c]>|</?[A-Za-z0-9_.-]+>|\[/?[A-Za-z_][A-Za-z0-9_]*\]")


def test_visitor_control_text_never_becomes_a_control_token(llama):
    """On the pinned build, control-token text in a user message becomes the control token
    (the fault), and the neutralised text never does: the templated prompt then holds only
    the template's own turn markers."""
    client = httpx.Client(base_url=llama.spec.url, timeout=30)

    def tokens(text: str, special: bool) -> list[int]:
        body = {"content": text, "add_special": False, "parse_special": special}
        return [t if isinstance(t, int) else t["id"]
                for t in client.post("/tokenize", json=body).json()["tokens"]]

    spellings = {m for v in CONTROL_VECTORS for m in SHAPE.findall(v["input"])}
    control = {ids[0]: s for s in spellings
               if len(ids := tokens(s, True)) == 1 and len(tokens(s, False)) > 1}
    assert {"<|im_start|>", "<|im_end|>", "<|endoftext|>"} <= set(control.values())

    def controls_in(user_text: str) -> list[str]:
        messages = [{"role": "system", "content": "S"}, {"role": "user", "content": user_text}]
        prompt = client.post("/apply-template", json={"messages": messages}).json()["prompt"]
        return sorted(control[t] for t in tokens(prompt, True) if t in control)

    structure = controls_in("Hi")
    injected = [v["name"] for v in CONTROL_VECTORS if controls_in(v["input"]) != structure]
    assert "ChatML turn" in injected, "the fault this guards against no longer shows"
    for vector in CONTROL_VECTORS:
        assert controls_in(vector["output"]) == structure, vector["name"]


def test_model_sha256_mismatch_refuses_to_start(example_site):
    assert LLAMA_BINARY is not None
    spec = LlamaSpec(binary=LLAMA_BINARY, model=MODEL, port=free_port(), threads=1)
    server = LlamaServer(spec, "0" * 64)
    with pytest.raises(ModelVerificationError, match="mismatch"):
        server.start()
    assert server.process is None
    done = subprocess.run(
        [sys.executable, "-m", "site_knowledge.cli", "serve", str(example_site.site_dir),
         "--mode", "public", "--model", str(MODEL), "--model-sha256", "0" * 64,
         "--llama-port", str(spec.port)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 3 and "mismatch" in done.stderr
    with pytest.raises(httpx.ConnectError):
        httpx.get(spec.url + "/health")


def test_logs_and_metrics_hold_no_prompts_or_answers(gateway, recorder):
    """Runs last in this module: everything asked and answered so far stays out of both."""
    assert ASKED and ANSWERS
    snapshot = httpx.get(gateway + "/metrics").text
    logged = "\n".join(recorder.lines)
    assert any(line.startswith("uvicorn") for line in recorder.lines), \
        "nothing from uvicorn was recorded: its half of this check could not fail"
    for text in [*ASKED, *(a for a in ANSWERS if len(a.strip()) >= 12)]:
        assert text not in snapshot
        assert text not in logged
