"""The chat box as visitors use it (issue 36), in real Chromium against the real example site.

Scenarios live in tests/browser/box_ux.mjs; each test runs one and asserts on what it saw.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_sites import REPO, build_example_site, require_browser, run_node
from gateway_fixtures import (
    HAVE_LLAMA,
    MODEL,
    ScriptedUpstream,
    ThreadedServer,
    ask,
    free_port,
    start_llama,
)

from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.config import GatewayConfig, Limits
from site_knowledge.gateway.gaps import Ledger
from site_knowledge.retrieval import load_index

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOTS = REPO / "docs" / "assets" / "screenshots"


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_browser()
    return build_example_site(tmp_path_factory.mktemp("example"))


def scenario(name: str, site: Path, arg: str | None = None, **env: str) -> Any:
    return run_node("box_ux.mjs", name, str(site), *([arg] if arg else []), env=env)


def test_typing_in_the_box_never_scrolls_the_page(example_site: Path) -> None:
    result = scenario("typing", example_site)
    assert result["offsite"] == []
    assert result["pageHeight"] > 500, "the home page should be long enough to scroll"
    for case in (result["top"], result["middle"]):
        assert case["typed"] == "Where did he work?"
        assert case["afterOpen"] == case["before"], case
        assert set(case["ys"]) == {case["before"]}, case
    assert result["middle"]["before"] > 0


ON_TOPIC = "Where did Teo work before his current job?"


@pytest.fixture(scope="module")
def gateway_stack(example_site: Path, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[tuple[str, int]]:
    """The real gateway in front of a real llama-server (the small test model), for the
    example site served on ``port``."""
    if not HAVE_LLAMA:
        pytest.skip("llama-server or the SmolLM2 GGUF is missing: run scripts/setup_llama.sh")
    index = load_index(example_site)
    index.encoder  # noqa: B018  (load the encoder before the clock starts)
    port = free_port()
    llama = start_llama(tmp_path_factory.mktemp("llama") / "llama.log")
    config = GatewayConfig(
        upstreams=(llama.spec.url,),
        allow_origins=frozenset({f"http://127.0.0.1:{port}"}),
        limits=Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000),
        model=MODEL.name,
    )
    try:
        with ThreadedServer(create_app(index, config, model_sha256=llama.model_sha256)) as gw:
            yield gw.url + "/", port
    finally:
        llama.stop()


def assert_sources_first(result: dict[str, Any]) -> None:
    timeline = result["timeline"]
    assert timeline["sources"], "the pages being read are listed"
    assert timeline["label"] == "Reading"
    assert timeline["deltaAt"] is not None, "the answer streamed"
    assert timeline["sourcesAt"] < timeline["deltaAt"]
    assert timeline["sourcesAtDelta"] == len(timeline["sources"]), "still listed when it streams"
    answer = result["answer"]
    finished = result["finished"]
    assert [s["title"] for s in answer["sources"]] == timeline["sources"]
    # The finished list keeps the pages read, in order, then any cited page it lacked; the
    # cited ones, and only those, are marked.
    assert [f["text"] for f in finished[: len(timeline["sources"])]] == timeline["sources"]
    cited = {c["url"] for c in answer["citations"]}
    assert {f["href"] for f in finished if f["cited"]} == cited
    assert result["label"] == ("Sources" if cited else "Sources consulted")


@pytest.mark.llama
def test_gateway_sources_are_listed_before_the_answer_streams(
        example_site: Path, gateway_stack: tuple[str, int]) -> None:
    gateway, port = gateway_stack
    result = scenario("sources_first", example_site,
                      json.dumps({"gateway": gateway, "question": ON_TOPIC}),
                      SK_SITE_PORT=str(port))
    assert result["offsite"] == []
    assert result["answer"]["engine"] == "gateway"
    assert_sources_first(result)


def test_device_search_hits_are_listed_before_the_local_model_streams(example_site: Path) -> None:
    """Gateway down: the local search's hits are listed before wllama (the real model, on the
    CPU) streams its answer."""
    result = scenario("sources_first", example_site, json.dumps({"question": ON_TOPIC}))
    assert result["offsite"] == []
    assert result["answer"]["engine"] == "wllama"
    assert_sources_first(result)


SLOTMETER = "What is slotmeter?"


@pytest.fixture(scope="module")
def scripted_gateway(example_site: Path) -> Iterator[tuple[str, int, Ledger]]:
    """The real gateway in front of a scripted stand-in for llama-server (it answers
    "Slotmeter measures [1] caches [9]." to anything), with its content-gap ledger."""
    index = load_index(example_site)
    port = free_port()
    upstream = ScriptedUpstream()
    ledger = Ledger()
    config = GatewayConfig(
        upstreams=(), allow_origins=frozenset({f"http://127.0.0.1:{port}"}),
        limits=Limits(visitor_requests_per_minute=10_000, global_requests_per_minute=10_000),
    )
    with ThreadedServer(upstream.app) as llama:
        config = replace(config, upstreams=(llama.url,))
        with ThreadedServer(create_app(index, config, ledger=ledger)) as gw:
            yield gw.url + "/", port, ledger


def test_copy_gives_markdown_with_links_and_a_vote_reaches_the_gateway(
        example_site: Path, scripted_gateway: tuple[str, int, Ledger]) -> None:
    gateway, port, ledger = scripted_gateway
    result = scenario("copy_vote", example_site,
                      json.dumps({"gateway": gateway, "question": SLOTMETER}),
                      SK_SITE_PORT=str(port))
    assert result["offsite"] == []
    answer = result["answer"]
    assert answer["engine"] == "gateway" and len(answer["id"]) == 32
    citations = answer["citations"]
    assert citations
    copied = result["copied"]
    body, _, sources = copied.partition("\n\nSources:\n\n")
    assert body.startswith("Slotmeter measures caches [[1]](")
    for c in citations:
        assert f"({c['url']})" in body
        assert f". [{c['title']}]({c['url']})" in sources
    assert json.loads(result["feedback"][0]) == {"id": answer["id"], "vote": "down"}
    assert result["pressed"] == [["Good answer", "false"], ["Bad answer", "true"]]
    down = {p["url"]: p["down"] for p in ledger.summary()["places"] if p["down"]}
    assert down == {c["path"].split("#")[0]: 1 for c in citations}


def test_on_a_phone_the_box_is_full_screen_and_closes_back_to_a_usable_page(
        example_site: Path) -> None:
    result = scenario("phone", example_site)
    assert result["offsite"] == []
    assert result["viewport"] == {"width": 390, "height": 844}
    opened = result["opened"]
    assert opened["box"] == {"x": 0, "y": 0, "width": 390, "height": 844}
    assert opened["inputInView"] and opened["inputInViewAfterAnswer"]
    assert opened["focused"] == "skn-input"
    assert opened["closeInView"]
    assert opened["closeSize"]["width"] >= 44 and opened["closeSize"]["height"] >= 44
    assert opened["locked"] == "hidden", "the page behind does not scroll while the box is open"
    assert result["afterButton"] and result["afterEscape"]
    after = result["after"]
    assert after["overflow"] == result["overflowBefore"]
    assert not after["covered"]
    assert after["focused"], "focus goes back to the button that opened the box"
    assert after["scrolled"] > 0
    assert after["drawerOpen"]
    assert after["navigatedTo"] != "/"


def test_keyboard_only_from_ctrl_k_to_a_cited_link_with_no_serious_axe_violation(
        example_site: Path, scripted_gateway: tuple[str, int, Ledger]) -> None:
    """axe-core (node_modules, injected locally) audits the example page with the box open and
    answered. The box and its launcher have no violation at all, and the page as a whole no
    serious or critical one (the example darkens Material's teal and names Material's search
    dialog: docs/stylesheets/contrast.css, docs/javascripts/a11y.js)."""
    gateway, port, _ = scripted_gateway
    result = scenario("a11y", example_site,
                      json.dumps({"gateway": gateway, "question": SLOTMETER}),
                      SK_SITE_PORT=str(port))
    assert result["offsite"] == []
    assert result["openedFocus"]["id"] == "skn-input"
    assert result["hiddenAfterEscape"] and result["closedFocus"]["launcher"], \
        "focus goes back to the launcher on close"
    assert result["multiline"] == "first line\nsecond line", "Shift+Enter inserts a newline"
    assert result["exchangesBeforeSubmit"] == 0, "Shift+Enter does not send"
    assert result["liveRegion"] == {"live": "polite", "role": "log"}
    assert all(result["trapped"]), "Tab and Shift+Tab never leave the open dialog"
    assert all(label["name"].strip() for label in result["labels"])
    assert {label["name"] for label in result["labels"]} >= {
        "Close", "Copy the answer as Markdown", "Good answer", "Bad answer", "Your question",
        "Ask"}
    assert result["boxAudit"] == [], "no violation of any impact in the box or the launcher"
    serious = ("serious", "critical")
    page = [(v["id"], v["targets"]) for v in result["pageAudit"] if v["impact"] in serious]
    assert page == [], "the example page as a whole (its palette and Material's search dialog)"
    reached = result["reached"]
    assert reached is not None, "no cited link reachable with Shift+Tab from the input"
    assert result["followed"] == reached["href"], "Enter follows the cited link"


def test_screenshot_of_the_box_answering_on_a_phone(example_site: Path) -> None:
    """Search only, as the desktop screenshots (tests/test_browser_box.py): what the box shows
    is then the site's own text, not a small test model's."""
    path = SCREENSHOTS / "chat-box-phone.png"
    shot = scenario("phone_shot", example_site, json.dumps(
        {"question": "What projects has Teo built?", "path": str(path)}))
    assert shot["offsite"] == []
    assert shot["answer"].strip()
    assert path.stat().st_size > 10_000


# Questions about Teo the example site cannot answer (the scripted model declines them), and
# two it has nothing near at all (the gate refuses them).
UNANSWERED = ["Does Teo have a podcast?", "What is Teo's phone number?",
              "Which conference talks has Teo given?", "Is Teo available for freelance work?"]
OFF_SITE = ["What is the best recipe for banana bread?", "How tall is Mount Everest?"]


def test_screenshot_of_the_content_gap_report(example_site: Path, tmp_path: Path) -> None:
    """A gateway (the real one, a scripted model) counts what it could not answer; the report
    it prints, shown as a terminal shows it."""
    index = load_index(example_site)
    upstream = ScriptedUpstream()
    config = GatewayConfig(upstreams=(), limits=Limits(visitor_requests_per_minute=10_000,
                                                       global_requests_per_minute=10_000))
    with ThreadedServer(upstream.app) as llama, ThreadedServer(create_app(
            index, replace(config, upstreams=(llama.url,)), ledger=Ledger(tmp_path))) as gw:
        for question in OFF_SITE:
            assert ask(gw.url, question).terminal["refusal"] == "gate"
        upstream.mode = "declines"
        for question in UNANSWERED:
            ask(gw.url, question)
        upstream.mode = "ok"
        for question, vote in (("What is slotmeter?", "down"), ("What is slotmeter for?", "up")):
            answered = ask(gw.url, question)
            httpx.post(gw.url + "/api/feedback", json={"id": answered.answer_id, "vote": vote},
                       timeout=30).raise_for_status()
    report = subprocess.run([sys.executable, "-m", "site_knowledge.cli", "report",
                             "--state-dir", str(tmp_path)],
                            capture_output=True, text=True, check=True).stdout
    assert "Projects > slotmeter" in report
    assert not [q for q in UNANSWERED + OFF_SITE if q in report]
    path = SCREENSHOTS / "content-gap-report.png"
    shot = scenario("text_shot", example_site, json.dumps(
        {"text": "$ site-knowledge report\n" + report.rstrip(), "title": "report",
         "path": str(path)}))
    assert shot["offsite"] == []
    assert path.stat().st_size > 5_000
