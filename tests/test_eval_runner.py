"""The gateway runner's SSE client, the battery run and the reports, against a fake gateway."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from evals import battery_run, report
from evals.artifact import SiteIndex
from evals.dataset import Battery, Exchange, Item
from evals.engines import GatewayEngine, sse_events

SITE = SiteIndex.from_data(
    {
        "site": {"url": "https://example.org/"},
        "prompt": {"refusal": "That isn't covered on this site."},
        "sources": [{"id": "career", "kind": "ontology", "url": "cv/", "path": None}],
        "passages": [{"id": "career#0", "source": "career", "url": "cv/#career", "text": ""}],
    },
    Path("site-knowledge.json"),
    "f" * 64,
)

ITEMS = (
    Item("lookup-1", "lookup", "Where does she work?", facts=(("Northwind",),), sources=("career",)),
    Item(
        "followup-1",
        "followup",
        "And before?",
        history=(Exchange("Where now?", "Northwind."),),
        facts=(("Contoso",),),
        sources=("career",),
    ),
    Item("refuse-1", "must_refuse", "Capital of Peru?", must_refuse=True),
    Item("lookup-2", "lookup", "Broken stream?", facts=(("x",),)),
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
    if question.startswith("Where"):
        stream = _sse(
            {"queued": {"position": 1}},
            {"sources": [{"n": 1, "url": "cv/#career", "title": "Career"}]},
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
    results = battery_run.run(battery, engine, SITE)
    by_id = {s.id: (a, s) for _, a, s in results}

    answer, score = by_id["lookup-1"]
    assert answer.text == "She works at Northwind [1]."
    assert answer.first_token_ms is not None
    assert score.score == 3

    _, score = by_id["followup-1"]
    assert score.score == 2 and "no citation" in score.notes[0]

    answer, score = by_id["refuse-1"]
    assert answer.refused and score.score == 3 and LIMITED  # a 429 was waited out, not scored

    answer, score = by_id["lookup-2"]
    assert answer.error == "stream ended without a terminal event"
    assert score.score == 0

    info = engine.info()
    model = battery_run.model_identity(None, info["healthz"]["model"], info["healthz"]["model_sha256"])
    doc = battery_run.document(
        battery,
        engine.name,
        SITE,
        results,
        label="fake",
        model=model,
        configuration={"engine": info},
        wall_s=1.0,
    )
    assert doc["summary"]["score"] == 8 and doc["summary"]["max_score"] == 12
    assert doc["summary"]["by_category"]["lookup"] == {"n": 2, "score": 3, "max_score": 6, "percent": 50.0}
    assert doc["model"] == {"name": "tiny.gguf", "sha256": "ab", "path": None}
    assert {"id", "category", "score", "max_score", "notes"} <= set(doc["questions"][0])
    assert len(doc["lost_points"]) == 2
    assert doc["artifact"]["sha256"] == "f" * 64
    assert set(doc["latency_ms"]) >= {"p50", "p95", "first_token_p50"}

    json_path, md_path = report.write(doc, tmp_path, "battery-fake")
    assert json.loads(json_path.read_text())["dataset"]["version"] == "v-test"
    text = md_path.read_text()
    assert "Score: 8/12" in text and "stream ended without a terminal event" in text

    worse = json.loads(json_path.read_text())
    worse["label"] = "worse"
    worse["summary"]["score"] = 5
    worse["questions"][0]["score"] = 0
    table = report.compare(doc, worse)
    assert "| total | 8.000 | 5.000 | -3.000 |" in table
    assert "lookup-1" in table


def test_stored_answers_rescore_to_the_same_scores(tmp_path: Path) -> None:
    from evals.scorer import score_answer

    engine = GatewayEngine("http://gw", token="s3cret", transport=httpx.MockTransport(_handler))
    battery = Battery("v-test", tmp_path / "v-test.jsonl", ITEMS)
    battery.path.write_text("{}\n")
    results = battery_run.run(battery, engine, SITE)
    doc = battery_run.document(
        battery, engine.name, SITE, results, label="x", model={}, configuration={}, wall_s=0.0
    )
    stored = battery_run.stored_answers(json.loads(json.dumps(doc)))
    for item, _, score in results:
        again = score_answer(item, stored[item.id], SITE)
        assert (again.score, again.notes) == (score.score, score.notes), item.id
