"""The second try for an answer whose excerpt numbers stood where its answer belongs: asked in
the same conversation, not streamed, carried by ``done.text`` and counted; the first answer's
decline stands when the second try fails. The scripted upstream plays what a real model
cannot be made to write on demand (a marker in place of a name)."""

from __future__ import annotations

from gateway_fixtures import SCRIPTS, ThreadedServer, ask, metrics
from starlette.responses import JSONResponse

from site_knowledge.gateway import restate
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.grounding import Grounded
from site_knowledge.grounding.answer import UNSUPPORTED
from site_knowledge.grounding.claims import Claim

GENEROUS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)
QUESTION = "Where did Teo build slotmeter?"


def test_a_stand_in_answer_is_asked_again_and_the_second_answer_is_done_text(
        example_index, scripted):
    upstream, url = scripted
    upstream.queue = [SCRIPTS["stand_in"], SCRIPTS["restated"]]
    before = len(upstream.requests)
    with ThreadedServer(create_app(example_index, GatewayConfig((url,), limits=GENEROUS))) as server:
        stream = ask(server.url, QUESTION)
        counted = metrics(server.url)["upstream"]["restatements"]
    assert stream.text == "Teo built slotmeter at [1]."  # only the first try streams
    done = stream.terminal
    assert done is not None and done["finish_reason"] == "stop"
    assert done["text"] == "Teo built slotmeter at Fennec Systems in Vienna [1]."
    assert done["grounded"] is True and "refused" not in done
    assert done["citations"] and done["citations"][0]["n"] == 1
    first, second = upstream.requests[before:]
    assert second["messages"][:-2] == first["messages"]
    assert second["messages"][-2:] == [
        {"role": "assistant", "content": "Teo built slotmeter at [1]."},
        {"role": "user", "content": restate.INSTRUCTION}]
    assert counted == 1


def test_when_the_second_try_fails_the_first_answers_decline_stands(example_index, scripted):
    upstream, url = scripted
    upstream.queue = [SCRIPTS["stand_in"], JSONResponse({"error": "boom"}, status_code=500)]
    with ThreadedServer(create_app(example_index, GatewayConfig((url,), limits=GENEROUS))) as server:
        stream = ask(server.url, QUESTION)
    done = stream.terminal
    assert done is not None and "error" not in done
    assert done["text"].startswith(UNSUPPORTED)
    assert done["refused"] is True and done["refusal"] == "unsupported"


def test_only_a_decline_made_of_stand_ins_is_tried_again() -> None:
    stand_in = Claim("stand-in", "The package is [1].")
    assert restate.wanted(Grounded(UNSUPPORTED, [], True, False, [stand_in], declined="unsupported"))
    assert not restate.wanted(Grounded("The package is x [1].", [1], True, True, [stand_in]))
    assert not restate.wanted(Grounded(UNSUPPORTED, [], True, False, [Claim("number", "190")],
                                       declined="unsupported"))
    assert not restate.wanted(Grounded("The site does not say.", [], False, True,
                                       declined="model"))
