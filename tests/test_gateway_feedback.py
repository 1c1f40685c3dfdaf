"""Answer ids and votes over real HTTP: ``done`` carries an id, ``POST /api/feedback`` takes
that id and a vote and nothing else, under the questions' policy, and counts the vote once
for each page the answer cited. A scripted upstream stands in for llama-server."""

from __future__ import annotations

import json

import httpx
import pytest
from gateway_fixtures import ThreadedServer, ask, free_port

from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.gateway.gaps import Ledger

ANSWERABLE = "What is slotmeter?"
OFF_TOPIC = "What is the best recipe for banana bread?"
ORIGIN = "https://site.example"
GENEROUS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)


def vote(base: str, body: object, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(base + "/api/feedback", content=json.dumps(body).encode(),
                      headers={"content-type": "application/json", **(headers or {})},
                      timeout=30)


def pages(ledger: Ledger, kind: str) -> dict[str, int]:
    return {p["url"]: p[kind] for p in ledger.summary()["places"] if p[kind]}


def test_each_answer_gets_an_id_and_a_vote_counts_once_per_cited_page(example_index, scripted):
    upstream, url = scripted
    upstream.mode = "ok"
    ledger = Ledger()
    config = GatewayConfig(upstreams=(url,), limits=GENEROUS, allow_origins=frozenset({ORIGIN}))
    with ThreadedServer(create_app(example_index, config, ledger=ledger)) as server:
        first, second = ask(server.url, ANSWERABLE), ask(server.url, ANSWERABLE)
        refusal = ask(server.url, OFF_TOPIC)
        ids = [first.answer_id, second.answer_id, refusal.answer_id]
        assert len(set(ids)) == 3, "every answer has its own id"
        cited = {c["url"].split("#")[0] for c in first.terminal["citations"]}
        assert cited

        up = vote(server.url, {"id": first.answer_id, "vote": "up"}, {"origin": ORIGIN})
        assert up.status_code == 204
        assert up.headers["access-control-allow-origin"] == ORIGIN
        assert pages(ledger, "up") == dict.fromkeys(cited, 1)
        assert vote(server.url, {"id": first.answer_id, "vote": "up"}).status_code == 204
        assert pages(ledger, "up") == dict.fromkeys(cited, 1), "the same vote twice counts once"
        assert vote(server.url, {"id": first.answer_id, "vote": "down"}).status_code == 204
        assert pages(ledger, "up") == {}, "a changed vote moves"
        assert pages(ledger, "down") == dict.fromkeys(cited, 1)

        preflight = httpx.options(server.url + "/api/feedback", headers={
            "origin": ORIGIN, "access-control-request-method": "POST"})
        assert preflight.status_code == 204


@pytest.mark.parametrize(("body", "headers", "status", "code"), [
    ({"id": "0" * 32, "vote": "up"}, {}, 404, "unknown_answer"),
    ({"id": "0" * 32, "vote": "up", "question": "x"}, {}, 422, "invalid_request"),
    ({"id": "0" * 32}, {}, 422, "invalid_request"),
    ({"id": "0" * 32, "vote": "meh"}, {}, 422, "invalid_request"),
    ({"id": "../etc", "vote": "up"}, {}, 422, "invalid_request"),
    ([1, 2], {}, 422, "invalid_request"),
    ({"id": "0" * 32, "vote": "up", "pad": "x" * 300}, {}, 413, "body_too_large"),
    ({"id": "0" * 32, "vote": "up"}, {"origin": "https://evil.example"}, 403,
     "origin_not_allowed"),
])
def test_a_vote_is_an_id_and_a_vote_and_nothing_else(example_index, body, headers, status, code):
    config = GatewayConfig(upstreams=(f"http://127.0.0.1:{free_port()}",), limits=GENEROUS,
                           allow_origins=frozenset({ORIGIN}))
    with ThreadedServer(create_app(example_index, config)) as server:
        response = vote(server.url, body, headers)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_votes_are_rate_limited_like_questions_and_need_the_token(example_index):
    limits = Limits(visitor_requests_per_minute=2, global_requests_per_minute=100)
    config = GatewayConfig(upstreams=(f"http://127.0.0.1:{free_port()}",), limits=limits,
                           token="s3cret")
    with ThreadedServer(create_app(example_index, config)) as server:
        assert vote(server.url, {"id": "0" * 32, "vote": "up"}).status_code == 401
        token = {"authorization": "Bearer s3cret"}
        codes = [vote(server.url, {"id": "0" * 32, "vote": "up"}, token).status_code
                 for _ in range(3)]
        assert codes == [404, 404, 429]
        # Votes have a window of their own: questions are still welcome.
        assert ask(server.url, OFF_TOPIC, headers=token).status == 200
