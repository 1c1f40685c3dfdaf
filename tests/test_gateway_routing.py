"""Source routing (``gateway/routing.py``): the catalog, the schema, the prompt's stable
prefix, validation of every kind of bad reply, the evidence a route selects, and the gateway
falling back to the hybrid order when a reply is unusable.

The HTTP tests use the scripted upstream (``ScriptedUpstream.route_mode``): it plays the
malformed replies a schema-constrained real model cannot give, and a router's refusal and the
check's verdict, which a real model gives only when it chooses to; the real call is in
``test_gateway_routing_llama.py``.
"""

from __future__ import annotations

import pytest
from gateway_fixtures import MALFORMED_ROUTES, ThreadedServer, ask, metrics

from site_knowledge.gateway import routing
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits, Routing
from site_knowledge.gateway.policy import AskRequest, Exchange

GENEROUS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)
QUESTION = "Where did Teo live while he had no employer?"
ONTOLOGY = ("profile", "career", "education", "geography", "skills", "projects", "awards",
            "architecture", "fiction-branches", "fiction-lore", "derived-facts")


def deep_hits(index, question, history=()):
    return index.search(question, list(history), "hybrid", len(index.passages)).hits


def test_the_catalog_is_the_ontology_then_the_pages_behind_the_best_candidates(example_index):
    hits = deep_hits(example_index, QUESTION)
    found = routing.catalog(example_index, hits, pages=4)
    assert tuple(e.id for e in found.stable) == ONTOLOGY
    pages = list(dict.fromkeys(h.source.id for h in hits if h.source.id not in ONTOLOGY))[:4]
    assert [e.id for e in found.matched] == pages
    assert found.keys == tuple(str(n) for n in range(1, len(ONTOLOGY) + 5))
    assert [found.source_id(k) for k in found.keys] == [*ONTOLOGY, *pages]
    assert all(len(e.line()) < 150 and "\n" not in e.line() for e in found.matched)


def test_the_schema_offers_exactly_the_catalog_ids_and_three_intents(example_index):
    found = routing.catalog(example_index, deep_hits(example_index, QUESTION), pages=6)
    body = routing.payload(routing.messages(("Teo Varga", ""), found, AskRequest(QUESTION, ()),
                                            Routing()), found.keys, Routing())
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["source_ids"]["items"]["enum"] == list(found.keys)
    assert schema["properties"]["source_ids"]["maxItems"] == Routing().max_sources
    assert schema["properties"]["intent"]["enum"] == ["answer", "not_on_site", "unsafe"]
    assert schema["additionalProperties"] is False
    assert body["id_slot"] == 0 and body["temperature"] == 0 and body["cache_prompt"] is True
    assert body["max_tokens"] == Routing().max_tokens
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


def test_what_changes_per_question_comes_after_the_stable_prefix(example_index):
    settings = Routing()
    built = []
    for question in (QUESTION, "What is slotmeter?"):
        found = routing.catalog(example_index, deep_hits(example_index, question), 6)
        history = (Exchange("Which tool did Teo write at Kestrel?", "pg-shadow [2]."),)
        built.append(routing.messages(("Teo Varga", ""), found, AskRequest(question, history),
                                      settings))
    first, second = built
    assert first[0] == second[0], "the system message must be byte-identical"
    assert "\n2: Career timeline (" in first[0]["content"]
    user = first[1]["content"]
    assert user.endswith(f"Question: {QUESTION}")
    hinted = routing.messages(("Teo Varga", ""), found, AskRequest("Did Teo work in Munich?", ()),
                              settings, never_used=["Munich"])
    assert hinted[1]["content"].endswith("Question: Did Teo work in Munich? "
                                         "(never mentioned: Munich)")
    assert "Visitor: Which tool did Teo write at Kestrel?\nAssistant: pg-shadow." in user
    assert user.index("Pages that matched") < user.index("Earlier") < user.index("Question:")


CATALOG = routing.Catalog(
    stable=(routing.Entry("1", "career", "Career timeline", ""),),
    matched=(routing.Entry("2", "cv", "CV", ""), routing.Entry("3", "skills", "Skills", ""),
             routing.Entry("4", "profile", "Profile", "")),
)


@pytest.mark.parametrize(("reply", "reason"), [
    ('{"subject": "x", "intent": "answer", "source_ids": ["2"', "malformed_json"),
    ("", "malformed_json"),
    ('["answer", ["2"]]', "not_an_object"),
    ('{"subject": "x", "intent": "answer"}', "missing_field"),
    ('{"intent": "answer", "source_ids": ["2"]}', "missing_field"),
    ('{"subject": "x", "intent": "answer", "source_ids": [], "needs_site_data": true}',
     "unknown_field"),
    ('{"subject": 7, "intent": "answer", "source_ids": []}', "bad_subject"),
    ('{"subject": "x", "intent": "chat", "source_ids": []}', "bad_intent"),
    ('{"subject": "x", "intent": "answer", "source_ids": "2"}', "bad_source_ids"),
    ('{"subject": "x", "intent": "answer", "source_ids": ["2", 3]}', "bad_source_ids"),
    ('{"subject": "x", "intent": "answer", "source_ids": ["2", "cv"]}', "unknown_id"),
    ('{"subject": "x", "intent": "answer", "source_ids": ["2", "1", "2"]}', "duplicate_id"),
    ('{"subject": "x", "intent": "answer", "source_ids": ["1", "2", "3", "4"]}', "oversized"),
])
def test_every_kind_of_bad_reply_fails_with_its_own_reason(reply, reason):
    with pytest.raises(routing.RouteError) as raised:
        routing.parse(reply, CATALOG, max_sources=3)
    assert raised.value.reason == reason


def test_a_valid_reply_is_a_route_of_source_ids_and_site_data_is_derived_from_them():
    route = routing.parse('{"source_ids": ["1", "2"], "intent": "answer", "subject": "jobs"}',
                          CATALOG, 3)
    assert route == routing.Route("answer", ("career", "cv")) and route.site_data
    refusal = routing.parse('{"subject": "Celery", "intent": "not_on_site", "source_ids": []}',
                            CATALOG, 3)
    assert refusal.intent == "not_on_site" and not refusal.site_data


def test_evidence_is_the_chosen_sources_best_passages_then_the_hybrid_order(example_index):
    hits = deep_hits(example_index, "Which projects did Teo write in Go and in Rust?")
    per_source: dict[str, list[str]] = {}
    for hit in hits:
        per_source.setdefault(hit.source.id, []).append(hit.passage.id)
    first, second = [sid for sid, ids in per_source.items() if len(ids) >= 2][:2]
    chosen = routing.evidence(example_index, hits, [first, second], budget=4)
    # round robin in the route's order: each source's best candidate, then each one's second
    assert [h.passage.id for h in chosen] == [per_source[first][0], per_source[second][0],
                                              per_source[first][1], per_source[second][1]]
    # a source with one candidate leaves the rest of the budget to the hybrid order
    single = next(sid for sid, ids in per_source.items() if len(ids) == 1)
    filled = routing.evidence(example_index, hits, [single], budget=4)
    rest = [h.passage.id for h in hits if h.source.id != single][:3]
    assert [h.passage.id for h in filled] == [per_source[single][0], *rest]


def test_an_ontology_source_without_candidates_offers_its_passages_in_order(example_index):
    hits = [h for h in deep_hits(example_index, QUESTION) if h.source.id != "fiction-lore"]
    chosen = routing.evidence(example_index, hits, ["fiction-lore"], budget=2)
    lore = [p.id for p in example_index.passages if p.source_id == "fiction-lore"]
    assert [h.passage.id for h in chosen][:min(2, len(lore))] == lore[:2]


def test_a_decision_reads_as_the_done_event_and_a_metrics_word():
    ok = routing.Decision(routing.Route("answer", ("cv",)), [])
    assert ok.public() == {"intent": "answer", "source_ids": ["cv"]}
    assert ok.outcome() == "answer" and not ok.refuses
    no = routing.Decision(routing.Route("unsafe", ()), [])
    assert no.refuses and no.outcome() == "unsafe"
    failed = routing.Decision(None, [], fallback="unknown_id")
    assert failed.public() == {"intent": "answer", "source_ids": [], "fallback": "unknown_id"}
    assert failed.outcome() == "invalid_unknown_id" and not failed.refuses


@pytest.mark.parametrize("mode", sorted(MALFORMED_ROUTES))
def test_an_unusable_routing_reply_falls_back_to_the_hybrid_order(example_index, scripted, mode):
    """The scripted upstream plays a reply that a schema-constrained model cannot send."""
    upstream, url = scripted
    upstream.mode, upstream.route_mode = "ok", mode
    config = GatewayConfig((url,), limits=GENEROUS, routing=Routing())
    question = "What is slotmeter?"
    with ThreadedServer(create_app(example_index, config)) as server:
        stream = ask(server.url, question)
        seen = metrics(server.url)
    routed, answered = upstream.requests[-2:]
    assert routed["id_slot"] == 0 and "response_format" in routed
    assert answered["id_slot"] == 1 and "response_format" not in answered
    done = stream.terminal
    assert done is not None and done["finish_reason"] == "stop"
    assert done["route"] == {"intent": "answer", "source_ids": [], "fallback": mode}
    sources = next(e["sources"] for e in stream.events if "sources" in e)
    hybrid = example_index.search(question, []).hits
    assert [s["url"] for s in sources] == [h.passage.url for h in hybrid][:len(sources)]
    assert seen["routing"]["outcomes"] == {f"invalid_{mode}": 1}
    assert seen["routing"]["fallbacks"] == 1
    assert seen["outcomes"]["completed"] == 1


def test_routing_off_sends_no_routing_call_and_no_route(example_index, scripted):
    upstream, url = scripted
    upstream.mode = "ok"
    before = len(upstream.requests)
    with ThreadedServer(create_app(example_index, GatewayConfig((url,), limits=GENEROUS))
                        ) as server:
        stream = ask(server.url, "What is slotmeter?")
        seen = metrics(server.url)
    assert len(upstream.requests) == before + 1
    assert "route" not in (stream.terminal or {})
    assert seen["routing"]["outcomes"] == {}


@pytest.mark.parametrize("command", [["gateway", "--artifact", "site", "--upstream", "u", "--mode", "public"],
                                     ["serve", "site", "--mode", "public"]])
def test_the_routing_flag_turns_routing_on_off_or_by_the_model(command):
    import argparse

    from site_knowledge.gateway.cli import register, routing_settings
    from site_knowledge.gateway.routing import ROUTED_PRESETS
    from site_knowledge.llama.presets import PRESETS

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    assert routing_settings(parser.parse_args([*command, "--routing", "on"]), None) == Routing()
    assert routing_settings(parser.parse_args([*command, "--routing", "off"]), None) is None
    auto = parser.parse_args(command)
    assert auto.routing == "auto" and routing_settings(auto, "my-own.gguf") is None
    for name, preset in PRESETS.items():
        expected = Routing() if name in ROUTED_PRESETS else None
        assert routing_settings(auto, preset.file_name) == expected


def test_the_check_reads_the_best_passages_and_answers_one_boolean(example_index):
    hits = deep_hits(example_index, QUESTION)
    settings = Routing(check_passages=2)
    check = routing.check_messages(AskRequest(QUESTION, ()), hits, settings)
    assert check[0]["content"] == routing.CHECK_RULES
    user = check[1]["content"]
    assert hits[0].passage.text in user and hits[1].passage.text in user
    assert hits[2].passage.text not in user and user.endswith(f"Question: {QUESTION}")
    body = routing.check_payload(check, settings)
    assert body["id_slot"] == 0 and body["temperature"] == 0
    assert body["response_format"]["json_schema"]["schema"] == routing.CHECK_SCHEMA
    assert routing.parse_check('{"answers": true}') is True
    assert routing.parse_check('{"answers": false}') is False
    for bad in ('{"answers": "yes"}', '{"answers": true, "why": "x"}', "[true]", "yes"):
        with pytest.raises(routing.RouteError) as raised:
            routing.parse_check(bad)
        assert raised.value.reason == "bad_check"


def test_an_overruled_refusal_answers_and_says_so():
    overruled = routing.Decision(routing.Route("not_on_site", ()), [], overruled=True)
    assert not overruled.refuses and overruled.outcome() == "not_on_site_overruled"
    assert overruled.public() == {"intent": "not_on_site", "source_ids": [], "overruled": True}


@pytest.mark.parametrize(("route_mode", "check_mode", "checks"), [
    ("not_on_site", "does_not_answer", 1), ("unsafe", "answers", 0)])
def test_a_confirmed_refusal_ends_without_an_answer_call(example_index, scripted, route_mode,
                                                         check_mode, checks):
    """``unsafe`` is never checked; ``not_on_site`` stands when the check finds no answer."""
    upstream, url = scripted
    upstream.route_mode, upstream.check_mode = route_mode, check_mode
    before = len(upstream.requests)
    config = GatewayConfig((url,), limits=GENEROUS, routing=Routing())
    with ThreadedServer(create_app(example_index, config)) as server:
        stream = ask(server.url, "What is slotmeter?")
        seen = metrics(server.url)
    sent = upstream.requests[before:]
    assert [r["response_format"]["json_schema"]["name"] for r in sent] == (
        ["route"] + ["check"] * checks)
    assert stream.events[0] == {"sources": []}
    assert stream.text == example_index.artifact["prompt"]["refusal"]
    assert stream.terminal == {"done": True, "finish_reason": "refused", "citations": [],
                               "grounded": True, "refused": True, "refusal": "router",
                               "route": {"intent": route_mode, "source_ids": []}}
    assert seen["routing"]["outcomes"] == {route_mode: 1}
    assert seen["outcomes"]["refused"] == 1 and seen["outcomes"]["completed"] == 0


def test_a_refusal_the_check_overrules_is_answered_from_the_hybrid_order(example_index,
                                                                         scripted):
    upstream, url = scripted
    upstream.mode, upstream.route_mode, upstream.check_mode = "ok", "not_on_site", "answers"
    config = GatewayConfig((url,), limits=GENEROUS, routing=Routing())
    question = "What is slotmeter?"
    with ThreadedServer(create_app(example_index, config)) as server:
        stream = ask(server.url, question)
        seen = metrics(server.url)
    assert upstream.requests[-1]["id_slot"] == 1
    done = stream.terminal
    assert done is not None and done["finish_reason"] == "stop"
    assert done["route"] == {"intent": "not_on_site", "source_ids": [], "overruled": True}
    sources = next(e["sources"] for e in stream.events if "sources" in e)
    hybrid = example_index.search(question, []).hits
    assert [s["url"] for s in sources] == [h.passage.url for h in hybrid][:len(sources)]
    assert seen["routing"]["outcomes"] == {"not_on_site_overruled": 1}
