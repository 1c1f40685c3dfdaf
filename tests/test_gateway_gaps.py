"""The content-gap report over real HTTP: refused, declined and voted-down questions counted
per day at the nearest page or section, served by the token-holding ``/metrics`` and printed
by ``site-knowledge report``; the question's text reaches no file and no log record unless
``--keep-questions``, and then only for its days. A scripted upstream stands in for
llama-server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from gateway_fixtures import LogRecorder, ThreadedServer, ask, metrics

from site_knowledge.cli import build_parser, main
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.gateway.gaps import DAY_S, QUESTIONS_FILE, Ledger, Place, day_of, kept_questions
from site_knowledge.gateway.reportcli import ledger_from

TOKEN = "s3cret"
AUTH = {"authorization": f"Bearer {TOKEN}"}
OFF_TOPIC = "What is the best recipe for banana bread with walnuts?"
DECLINED = "What exactly does slotmeter measure, in plain words?"
VOTED = "What is slotmeter and who wrote it?"
QUESTIONS = (OFF_TOPIC, DECLINED, VOTED)
GENEROUS = Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000)


class Clock:
    def __init__(self) -> None:
        self.now = 1_780_000_000.0

    def __call__(self) -> float:
        return self.now


def run_gateway(example_index, url: str, upstream, ledger: Ledger) -> dict[str, object]:
    """Ask the three questions (one refused by the gate, one the model declines, one voted
    down) and return what the gateway published."""
    config = GatewayConfig(upstreams=(url,), limits=GENEROUS, token=TOKEN)
    with ThreadedServer(create_app(example_index, config, ledger=ledger)) as server:
        refused = ask(server.url, OFF_TOPIC, headers=AUTH)
        upstream.mode = "declines"
        declined = ask(server.url, DECLINED, headers=AUTH)
        upstream.mode = "ok"
        answered = ask(server.url, VOTED, headers=AUTH)
        vote = httpx.post(server.url + "/api/feedback", headers=AUTH, timeout=30,
                          json={"id": answered.answer_id, "vote": "down"})
        assert vote.status_code == 204
        return {"refused": refused, "declined": declined, "answered": answered,
                "public": httpx.get(server.url + "/metrics").json(),
                "detail": metrics(server.url, TOKEN)}


def test_gaps_are_counted_per_nearest_place_and_no_question_is_kept(
        example_index, scripted, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    upstream, url = scripted
    clock = Clock()
    with LogRecorder() as recorder:
        seen = run_gateway(example_index, url, upstream,
                           Ledger(tmp_path, keep_questions_days=None, clock=clock))
    assert seen["refused"].terminal["refusal"] == "gate"
    assert seen["declined"].terminal["refusal"] in ("model", "unsupported")
    first_read = next(e["sources"] for e in seen["declined"].events if "sources" in e)[0]
    cited = {c["url"].split("#")[0] for c in seen["answered"].terminal["citations"]}

    assert "content_gaps" not in seen["public"], "the report needs the token"
    gaps = seen["detail"]["content_gaps"]
    assert gaps["days"] == {day_of(clock.now): {"refused": 1, "declined": 1, "down": 1 * len(cited),
                                                "up": 0}}
    by_url = {p["url"]: p for p in gaps["places"]}
    refused_at = [u for u, p in by_url.items() if p["refused"]]
    assert len(refused_at) == 1 and refused_at[0] in {p["url"] for p in
                                                      example_index.artifact["passages"]}
    assert by_url[first_read["url"]]["declined"] == 1
    assert by_url[first_read["url"]]["label"] == first_read["title"]
    assert {u for u, p in by_url.items() if p["down"]} == cited

    files = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    assert set(files) == {"content-gaps.json"}
    assert recorder.lines, "nothing was recorded: the log half of this check could not fail"
    for question in QUESTIONS:
        assert not [name for name, text in files.items() if question in text]
        assert not [line for line in recorder.lines if question in line]

    assert main(["report", "--state-dir", str(tmp_path), "--days", "3650"]) == 0
    printed = capsys.readouterr().out
    assert re.search(rf"^{day_of(clock.now)} +1 +1 +{len(cited)} +0$", printed, re.MULTILINE)
    assert f"({first_read['url'] or '/'})" in printed
    assert not [q for q in QUESTIONS if q in printed]
    assert main(["report", "--state-dir", str(tmp_path), "--days", "3650", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kept_questions"] == []


def test_keep_questions_keeps_refusals_for_their_days_only(example_index, scripted,
                                                          tmp_path: Path) -> None:
    upstream, url = scripted
    clock = Clock()
    run_gateway(example_index, url, upstream, Ledger(tmp_path, keep_questions_days=7, clock=clock))
    kept = kept_questions(tmp_path, clock.now)
    assert [(q["kind"], q["question"]) for q in kept] == [("refused", OFF_TOPIC),
                                                          ("declined", DECLINED)]
    assert VOTED not in (tmp_path / QUESTIONS_FILE).read_text(encoding="utf-8")

    clock.now += 6 * DAY_S
    Ledger(tmp_path, keep_questions_days=7, clock=clock)
    assert len(kept_questions(tmp_path, clock.now)) == 2, "kept within the days"
    clock.now += 1 * DAY_S + 1
    Ledger(tmp_path, keep_questions_days=7, clock=clock)  # a gateway starting deletes them
    assert (tmp_path / QUESTIONS_FILE).read_text(encoding="utf-8") == ""
    assert kept_questions(tmp_path, clock.now) == []


def test_a_gateway_without_keep_questions_deletes_what_an_earlier_one_kept(
        tmp_path: Path) -> None:
    clock = Clock()
    ledger = Ledger(tmp_path, keep_questions_days=30, clock=clock)
    ledger.count("refused", Place("cv/", "CV"), OFF_TOPIC)
    assert OFF_TOPIC in (tmp_path / QUESTIONS_FILE).read_text(encoding="utf-8")
    Ledger(tmp_path, clock=clock)
    assert not (tmp_path / QUESTIONS_FILE).exists()
    assert all(OFF_TOPIC not in p.read_text(encoding="utf-8") for p in tmp_path.iterdir())


def test_a_state_folder_that_cannot_be_written_never_breaks_an_answer(example_index, scripted,
                                                                      tmp_path: Path) -> None:
    _, url = scripted
    state = tmp_path / "state"
    ledger = Ledger(state)
    state.write_text("", encoding="utf-8")  # the folder becomes a file while the gateway runs
    config = GatewayConfig(upstreams=(url,), limits=GENEROUS)
    with LogRecorder() as recorder, ThreadedServer(
            create_app(example_index, config, ledger=ledger)) as server:
        stream = ask(server.url, OFF_TOPIC)
    assert stream.terminal is not None and stream.terminal["refusal"] == "gate"
    assert [line for line in recorder.lines if "content-gap counts not written" in line]
    assert not [line for line in recorder.lines if OFF_TOPIC in line]


def test_the_flags_keep_no_question_unless_asked(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    common = ["gateway", "--mode", "public", "--artifact", str(tmp_path), "--upstream", "http://x"]
    default = ledger_from(build_parser().parse_args(common))
    assert default.directory == tmp_path / "xdg" / "site-knowledge"
    assert default.keep_questions_days is None
    kept = ledger_from(build_parser().parse_args(
        [*common, "--state-dir", str(tmp_path / "s"), "--keep-questions", "14"]))
    assert (kept.directory, kept.keep_questions_days) == (tmp_path / "s", 14)
    with pytest.raises(SystemExit):
        ledger_from(build_parser().parse_args([*common, "--keep-questions", "0"]))
