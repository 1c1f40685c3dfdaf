"""The gateway runner's SSE client, the battery run and the reports.

The gateway here is a fake (an ``httpx.MockTransport``): it produces what the real one cannot be
made to produce on demand (a 429 on one chosen question, a stream cut before its terminal
event) and the ``done`` fields of issue 8 (a revised ``text``, ``grounded``) that the real
gateway may or may not send yet. The real gateway is exercised by the battery runs themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from site_knowledge.evals import report, runner
from site_knowledge.evals.dataset import Battery, Exchange, Fact, Item
from site_knowledge.evals.engines import GatewayEngine, sse_events
from site_knowledge.evals.scorer import Answer, Citation, score_answer
from site_knowledge.evals.site import SiteIndex
from site_knowledge.retrieval.index import PassageRecord, SourceRecord

SITE = SiteIndex.from_records(
    [
        SourceRecord("career", "ontology", "Career", "", "cv/", "fact", None),
        SourceRecord("blog", "page", "Blog", "", "blog/", "prose", "blog.md"),
    ],
    [
        PassageRecord("career#0", "career", "", "", "cv/#career"),
        PassageRecord("blog#0", "blog", "", "", "blog/"),
    ],
    site_url="https://example.org/",
    refusal="That isn't covered on this site.",
)
SITE.path, SITE.sha256 = Path("site-knowledge.json"), "f" * 64

ITEMS = (
    Item("lookup-1", "lookup", "Where does she work?", facts=(Fact((("Northwind",),)),), sources=("career",)),
    Item(
        "followup-1",
        "followup",
        "And before?",
        history=(Exchange("Where now?", "Northwind."),),
        facts=(Fact((("Contoso",),)),),
        sources=("career",),
    ),
    Item("refuse-1", "must_refuse", "Capital of Peru?", must_refuse=True),
    Item("lookup-2", "lookup", "Broken stream?", facts=(Fact((("x",),)),)),
    Item("lookup-3", "lookup", "Where did she study?", facts=(Fact((("Oslo",),)),), sources=("career",)),
)


LIMITED: list[bool] = []


def _sse(*events: object, comment: bool = True) -> bytes:
    parts = [": heartbeat\n\n"] if comment else []
    parts += [f"data: {json.dumps(e)}\n\n" for e in events]
    return "".join(parts).encode()


def _handler(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/healthz":
        return httpx.Response(200, json={"ok": True, "model": "tiny.gguf", "model_sha256": "ab"})
    body = json.loads(request.content)
    assert request.headers["authorization"] == "Bearer s3cret"
    question = body["question"]
    if question.startswith("Capital") and not LIMITED:
        LIMITED.append(True)
        return httpx.Response(429, json={"error": {"code": "rate_limited"}}, headers={"Retry-After": "0"})
    if question.startswith("Where does"):
        stream = _sse(
            {"queued": {"position": 1}},
            {"sources": [{"n": 1, "url": "cv/#career", "title": "Career", "id": "career#0"}]},
            {"delta": "She works at "},
            {"delta": "Northwind [1]."},
            {
                "done": True,
                "finish_reason": "stop",
                "citations": [{"n": 1, "url": "cv/#career", "title": "Career"}],
            },
        )
    elif question.startswith("And"):
        assert body["history"] == [{"question": "Where now?", "answer": "Northwind."}]
        stream = _sse(
            {"delta": "Before that, Contoso [1]."},
            {"done": True, "finish_reason": "stop", "citations": []},
            {"sources": []},
        )
    elif question.startswith("Where did"):
        # the gateway's claim check replaced the streamed answer and says so
        stream = _sse(
            {"sources": [{"n": 1, "url": "blog/", "title": "Blog"}]},
            {"delta": "She studied in Lima [1]."},
            {
                "done": True,
                "finish_reason": "stop",
                "citations": [{"n": 1, "url": "blog/", "title": "Blog"}],
                "grounded": False,
                "text": "The site does not say where she studied.",
            },
        )
    elif question.startswith("Capital"):
        stream = _sse({"done": True, "finish_reason": "refused", "citations": []})
        stream = _sse({"delta": "That isn't covered on this site."}) + stream
    else:
        stream = _sse({"delta": "partial"})
    return httpx.Response(200, content=stream, headers={"content-type": "text/event-stream"})


def test_sse_events_decodes_data_and_skips_comments() -> None:
    lines = [": ping", "", 'data: {"delta": "a"}', "", 'data: {"done": true}', ""]
    assert list(sse_events(iter(lines))) == [{"delta": "a"}, {"done": True}]


def test_gateway_battery_run_and_reports(tmp_path: Path) -> None:
    engine = GatewayEngine("http://gw", token="s3cret", transport=httpx.MockTransport(_handler))
    battery = Battery("v-test", tmp_path / "v-test.jsonl", ITEMS)
    battery.path.write_text("{}\n")
    results = runner.run(battery.items, engine, SITE)
    by_id = {s.id: (a, s) for _, a, s in results}

    answer, score = by_id["lookup-1"]
    assert answer.text == "She works at Northwind [1]."
    assert answer.first_token_ms is not None
    assert answer.evidence is not None and answer.evidence[0].url == "cv/#career"
    assert answer.grounded is None and answer.streamed_text is None
    assert score.score == 3

    _, score = by_id["followup-1"]
    assert score.score == 2 and "no citation" in score.notes[0]

    answer, score = by_id["refuse-1"]
    assert answer.refused and score.score == 3 and LIMITED  # a 429 was waited out, not scored

    answer, score = by_id["lookup-2"]
    assert answer.error == "stream ended without a terminal event"
    assert score.score == 0

    answer, score = by_id["lookup-3"]
    assert answer.text == "The site does not say where she studied."  # the revised text is scored
    assert answer.streamed_text == "She studied in Lima [1]."
    assert answer.grounded is False
    assert score.notes == ["-3 refused an answerable question"]

    info = engine.info()
    model = runner.model_identity(None, info["healthz"]["model"], info["healthz"]["model_sha256"])
    baselines = runner.run_baselines(battery.items, SITE)
    assert set(baselines) == {"constant-refusal"}  # no loaded index: no gate-only baseline
    doc = runner.document(
        battery,
        engine.name,
        SITE,
        results[:4],
        label="fake",
        model=model,
        configuration={"engine": info},
        wall_s=1.0,
        baselines=baselines,
        planned=5,
    )
    summary = doc["summary"]
    assert summary["score"] == 8 and summary["max_score"] == 12
    assert summary["by_category"]["lookup"] == {"n": 2, "score": 3, "max_score": 6, "percent": 50.0}
    # the baseline is scored on the same four items: only the must-refuse one earns points
    assert doc["baselines"]["constant-refusal"]["score"] == 3 and summary["margin"] == {"constant-refusal": 5}
    assert summary["lost_by_cause"] == {"error": 3, "unknown": 1}  # followup-1 streamed no sources
    assert summary["acceptance"]["times_constant_refusal"] == 2.67
    assert summary["acceptance"]["answerable_citing_expected"] == {"cited": 1, "of": 2}
    assert not doc["complete"]
    assert doc["model"] == {"name": "tiny.gguf", "sha256": "ab", "path": None}
    first = doc["questions"][0]
    assert {"id", "category", "score", "max_score", "notes", "evidence", "cause", "grounded"} <= set(first)
    assert first["evidence"] == [{"n": 1, "url": "cv/#career", "title": "Career", "id": "career#0"}]
    assert len(doc["lost_points"]) == 2
    assert doc["artifact"]["sha256"] == "f" * 64
    assert set(doc["latency_ms"]) >= {"p50", "p95", "first_token_p50"}

    json_path, md_path = report.write(doc, tmp_path, "battery-fake")
    assert json.loads(json_path.read_text())["dataset"]["version"] == "v-test"
    text = md_path.read_text()
    assert "Score: 8/12" in text and "stream ended without a terminal event" in text
    assert "baseline constant-refusal: 3/12 (25.0%); margin +5 points" in text

    worse = json.loads(json_path.read_text())
    worse["label"] = "worse"
    worse["summary"]["score"] = 5
    worse["questions"][0]["score"] = 0
    table = report.compare(doc, worse)
    assert "| total | 8.000 | 5.000 | -3.000 |" in table
    assert "lookup-1" in table


def test_retrieval_misses_are_told_from_generation_failures() -> None:
    item = ITEMS[0]
    wrong = score_answer(item, Answer("Contoso."), SITE)
    missed = Answer("Contoso.", evidence=[Citation(1, "blog/", "Blog")])
    given = Answer("Contoso.", evidence=[Citation(1, "cv/#career", "Career")])
    gated = Answer("That isn't covered on this site.", refused=True, evidence=[])
    assert runner.cause(item, missed, wrong, SITE) == "retrieval"
    assert runner.cause(item, gated, wrong, SITE) == "refused before generation"
    assert runner.cause(item, given, wrong, SITE) == "generation"
    assert runner.cause(item, Answer("Contoso."), wrong, SITE) == "unknown"


def test_stored_answers_rescore_to_the_same_scores(tmp_path: Path) -> None:

    engine = GatewayEngine("http://gw", token="s3cret", transport=httpx.MockTransport(_handler))
    battery = Battery("v-test", tmp_path / "v-test.jsonl", ITEMS)
    battery.path.write_text("{}\n")
    results = runner.run(battery.items, engine, SITE)
    doc = runner.document(
        battery, engine.name, SITE, results, label="x", model={}, configuration={}, wall_s=0.0
    )
    stored = runner.stored_answers(json.loads(json.dumps(doc)))
    for item, answer, score in results:
        again = score_answer(item, stored[item.id], SITE)
        assert (again.score, again.notes) == (score.score, score.notes), item.id
        assert (stored[item.id].evidence, stored[item.id].grounded) == (answer.evidence, answer.grounded)


def test_rates_count_facts_only_in_answers_and_the_table_sets_them_beside_the_gate(
        tmp_path: Path) -> None:
    declined = Item("decline-1", "lookup", "Where does she live?", facts=(Fact((("Oslo",),)),),
                    sources=("career",))
    off_topic = Item("off-1", "off_topic", "Price of a Pro plan?", must_refuse=True)
    gibberish = Item("gib-1", "gibberish", "blorp zint?", must_refuse=True)
    answers = {
        "lookup-1": Answer("She works at Northwind [1].", first_token_ms=2500.0,
                           evidence=[Citation(1, "cv/#career", "Career")],
                           citations=[Citation(1, "cv/#career", "Career")]),
        # A decline that quotes the fact states it, but a refusal states no fact.
        "decline-1": Answer("I can't answer that reliably. The closest it comes: Oslo [1].",
                            refused=True, first_token_ms=4000.0,
                            evidence=[Citation(1, "cv/#career", "Career")]),
        "off-1": Answer("That isn't covered on this site.", refused=True, first_token_ms=5.0,
                        evidence=[]),
        "gib-1": Answer("Pro costs 9 euros.", first_token_ms=3000.0,
                        evidence=[Citation(1, "blog/", "Blog")]),
    }
    items = [ITEMS[0], declined, off_topic, gibberish]
    results = [(i, answers[i.id], score_answer(i, answers[i.id], SITE)) for i in items]
    rates = runner.rates(results)
    assert rates == {"facts_present": 0.5, "answered": 0.5, "refused_when_due": 0.5}
    latency = runner.latency(results)
    assert latency["generated_first_token_p50"] == 3000.0, "a gate refusal's sentence is no first token"
    (tmp_path / "answers.jsonl").write_text("{}\n")
    doc = runner.document(Battery("answers", tmp_path / "answers.jsonl", tuple(items)), "gateway",
                          SITE, results, label="netbox-1.5b", model={}, configuration={},
                          wall_s=1.0, baselines=runner.run_baselines(items, SITE))
    table = report.table([doc])
    row = table.splitlines()[2]
    assert row.startswith("| netbox-1.5b | 4 | ")
    assert "| 58% (50% / n/a) | 50% (n/a) | 50.0% (1/2) | 50% (n/a) | 50% (n/a) | 0 | 3.0 / 4.0 |" in row
