"""Follow-up rewriting (``gateway/followup.py``): the rewrite's prompt and body, the check that
a rewrite keeps the question's words and adds none the conversation lacks, and the gateway
searching and answering the rewritten question.

The HTTP tests use the scripted upstream (``ScriptedUpstream.rewrite_mode``): it replays one
rewrite every time, which a real model gives only when it chooses to; the real call is in
``test_gateway_followup_llama.py``.
"""

from __future__ import annotations

import argparse
import json

import pytest
from gateway_fixtures import ThreadedServer, ask, metrics

from site_knowledge.gateway import followup
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.cli import followup_settings, register
from site_knowledge.gateway.config import Followups, GatewayConfig, Limits
from site_knowledge.gateway.policy import AskRequest, Exchange
from site_knowledge.gateway.routing import spoken

GENEROUS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)
HISTORY = [{"question": "Where did Teo work before Northwind Maps?",
            "answer": "At Kestrel Analytics in Berlin, as a Senior Software Engineer [2]."}]
ASK = AskRequest("What did he build there?",
                 tuple(Exchange(h["question"], h["answer"]) for h in HISTORY))
KESTREL = "What did Teo build at Kestrel Analytics?"


def reply(question: str) -> str:
    return json.dumps({"question": question})


def test_the_rewrite_reads_the_last_exchanges_after_rules_that_never_change():
    first = followup.messages(ASK, turns=2)
    other = followup.messages(AskRequest("Since when?", (Exchange("Where?", "Vienna."),)), 2)
    assert first[0] == other[0] == {"role": "system", "content": followup.RULES}
    user = first[1]["content"]
    assert "Visitor: Where did Teo work before Northwind Maps?" in user
    assert "Assistant: At Kestrel Analytics in Berlin" in user and "[2]" not in user
    assert user.endswith("Question: What did he build there?")


def test_the_body_is_greedy_on_slot_0_without_a_repetition_penalty_and_schema_bound():
    body = followup.payload(followup.messages(ASK, 2), Followups())
    assert body["id_slot"] == 0 and body["temperature"] == 0 and body["cache_prompt"] is True
    assert body["repeat_penalty"] == 1.0 and body["max_tokens"] == Followups().max_tokens
    schema = body["response_format"]["json_schema"]
    assert schema["name"] == "question" and schema["schema"] == followup.SCHEMA
    assert schema["schema"]["additionalProperties"] is False


def test_a_rewrite_may_bring_words_from_the_answer_and_change_their_form(example_index):
    terms = example_index.terms
    assert followup.check(reply(KESTREL), ASK, 2, terms) == (KESTREL, None)
    built = "What was built by Teo at Kestrel Analytics?"  # "build" -> "built"
    assert followup.check(reply(built), ASK, 2, terms) == (built, None)
    spaced = followup.check(reply("  What did Teo build\n at Kestrel?  "), ASK, 2, terms)
    assert spaced == ("What did Teo build at Kestrel?", None)


@pytest.mark.parametrize(("text", "reason"), [
    ('{"question": "What did Teo build in Munich?"}', "invented"),  # nobody said Munich
    ('{"question": "What did Teo do at Kestrel Analytics?"}', "dropped"),  # "build" lost
    ('{"question": "What did he build', "malformed"),
    ('{"query": "What did he build there?"}', "malformed"),
    ('{"question": "   "}', "malformed"),
    ('["What did he build there?"]', "malformed"),
])
def test_a_rewrite_that_adds_or_loses_a_word_is_rejected(example_index, text, reason):
    assert followup.check(text, ASK, 2, example_index.terms) == ("", reason)


def test_only_the_turns_the_rewrite_saw_may_supply_words(example_index):
    older = Exchange("What is tidewater?", "A Rust library for time series.")
    ask_ = AskRequest(ASK.question, (older, *ASK.history))
    tidewater = reply("What did Teo build at Kestrel Analytics with tidewater?")
    assert followup.check(tidewater, ask_, 2, example_index.terms)[1] is None
    assert followup.check(tidewater, ask_, 1, example_index.terms) == ("", "invented")


def last_user(request: dict) -> str:
    return str(request["messages"][-1]["content"])


def ask_followup(example_index, scripted, mode: str):
    """Ask ``ASK`` through a gateway whose scripted upstream rewrites it as ``mode`` says:
    the upstream, the answer's stream and the metrics after it."""
    upstream, url = scripted
    upstream.mode, upstream.rewrite_mode = "ok", mode
    with ThreadedServer(create_app(example_index, GatewayConfig((url,), limits=GENEROUS))
                        ) as server:
        stream = ask(server.url, ASK.question, HISTORY)
        seen = metrics(server.url)
    return upstream, stream, seen


def test_the_rewritten_question_is_searched_answered_and_shown(example_index, scripted):
    upstream, stream, seen = ask_followup(example_index, scripted, "kestrel")
    rewritten, answered = upstream.requests[-2:]
    assert rewritten["id_slot"] == 0 and rewritten["response_format"]["json_schema"][
        "name"] == "question"
    assert answered["id_slot"] == 1 and last_user(answered).endswith(f"Question: {KESTREL}")
    sources = next(e["sources"] for e in stream.events if "sources" in e)
    expected = example_index.search(KESTREL, [spoken(h["answer"]) for h in HISTORY]).hits
    assert [s["url"] for s in sources] == [h.passage.url for h in expected]
    as_asked = example_index.search(ASK.question, [h["question"] for h in HISTORY]).hits
    assert [s["url"] for s in sources] != [h.passage.url for h in as_asked]
    done = stream.terminal
    assert done is not None and done["standalone"] == KESTREL
    assert seen["followups"]["outcomes"] == {"rewritten": 1}
    assert seen["followups"]["latency_ms"]["p50"] is not None


@pytest.mark.parametrize(("mode", "outcome"), [("invented", "rejected_invented"),
                                               ("truncated", "rejected_truncated")])
def test_a_rejected_rewrite_leaves_the_question_as_asked_searched_with_the_answers(
        example_index, scripted, mode, outcome):
    upstream, stream, seen = ask_followup(example_index, scripted, mode)
    answered = upstream.requests[-1]
    assert last_user(answered).endswith(f"Question: {ASK.question}")
    assert "Munich" not in json.dumps(answered)
    sources = next(e["sources"] for e in stream.events if "sources" in e)
    with_answers = example_index.search(ASK.question, [spoken(h["answer"]) for h in HISTORY])
    as_asked = example_index.search(ASK.question, [h["question"] for h in HISTORY]).hits
    assert with_answers.answerable and with_answers.hits != as_asked
    assert [s["url"] for s in sources] == [h.passage.url for h in with_answers.hits]
    assert "standalone" not in (stream.terminal or {})
    assert seen["followups"]["outcomes"] == {outcome: 1}


def test_a_rewrite_joining_two_questions_searches_and_the_question_as_asked_is_answered(
        example_index, scripted):
    upstream, stream, seen = ask_followup(example_index, scripted, "joined")
    answered = upstream.requests[-1]
    assert last_user(answered).endswith(f"Question: {ASK.question}")
    joined = "Where did Teo work before Northwind Maps? What did he build there?"
    sources = next(e["sources"] for e in stream.events if "sources" in e)
    assert [s["url"] for s in sources] == [h.passage.url for h in example_index.search(
        joined, [spoken(h["answer"]) for h in HISTORY]).hits]
    assert "standalone" not in (stream.terminal or {})
    assert seen["followups"]["outcomes"] == {"joined": 1}


WHERE = [{"question": "Where does Teo live?", "answer": "In Vienna, Austria."},
         {"question": "Since when?", "answer": "Since April 2023."}]
DISTRICT = "Which district of Vienna does Teo live in?"


@pytest.mark.parametrize(("mode", "answered"), [("district", True), ("invented", False)])
def test_a_followup_the_gate_refuses_is_answered_only_if_its_rewrite_passes(
        example_index, scripted, mode, answered):
    assert not example_index.search("Which district?", [h["question"] for h in WHERE]).answerable
    upstream, url = scripted
    upstream.mode, upstream.rewrite_mode = "ok", mode
    with ThreadedServer(create_app(example_index, GatewayConfig((url,), limits=GENEROUS))
                        ) as server:
        before = len(upstream.requests)
        stream = ask(server.url, "Which district?", WHERE)
        seen = metrics(server.url)
    sent = upstream.requests[before:]
    assert sent[0]["response_format"]["json_schema"]["name"] == "question"
    done = stream.terminal
    assert done is not None
    if answered:
        assert len(sent) == 2 and last_user(sent[1]).endswith(f"Question: {DISTRICT}")
        assert done["standalone"] == DISTRICT and done["finish_reason"] != "refused"
        assert next(e["sources"] for e in stream.events if "sources" in e)
    else:  # the rewrite is rejected: refused as the gate would have, after one call
        assert len(sent) == 1
        assert done["finish_reason"] == "refused" and "standalone" not in done
        assert next(e["sources"] for e in stream.events if "sources" in e) == []
    assert sum(seen["followups"]["outcomes"].values()) == 1


def test_a_refused_question_without_history_never_reaches_the_model(example_index, scripted):
    upstream, url = scripted
    with ThreadedServer(create_app(example_index, GatewayConfig((url,), limits=GENEROUS))
                        ) as server:
        before = len(upstream.requests)
        stream = ask(server.url, "Which district?")
    assert upstream.requests[before:] == []
    assert stream.terminal is not None and stream.terminal["finish_reason"] == "refused"


@pytest.mark.parametrize("followups", [Followups(), None])
def test_no_rewrite_without_history_or_when_turned_off(example_index, scripted, followups):
    upstream, url = scripted
    upstream.mode = "ok"
    config = GatewayConfig((url,), limits=GENEROUS, followups=followups)
    with ThreadedServer(create_app(example_index, config)) as server:
        before = len(upstream.requests)
        ask(server.url, "What is slotmeter?")
        if followups is None:
            ask(server.url, ASK.question, HISTORY)
        seen = metrics(server.url)
    sent = upstream.requests[before:]
    assert sent and all("response_format" not in r for r in sent)
    assert seen["followups"]["outcomes"] == {}


@pytest.mark.parametrize("command", [["gateway", "--mode", "public", "--artifact", "site",
                                      "--upstream", "u"],
                                     ["serve", "site", "--mode", "public"]])
def test_the_followups_flag_turns_rewriting_on_or_off(command):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    assert followup_settings(parser.parse_args(command)) == Followups()
    assert followup_settings(parser.parse_args([*command, "--followups", "off"])) is None
