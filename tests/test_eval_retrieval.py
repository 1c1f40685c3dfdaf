"""The retrieval eval on a real build of the example site."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sites import BuiltSite

from site_knowledge.evals import report, retrieval_eval
from site_knowledge.evals.dataset import RetrievalQuestion, battery_dir, load_battery, load_questions
from site_knowledge.retrieval.artifact import load_artifact

REPO = Path(__file__).resolve().parent.parent
BATTERY = battery_dir() / "v1.jsonl"


@pytest.fixture(scope="module")
def example_dir(example_site: BuiltSite) -> Path:
    """The session's real build of the example site (tests/conftest.py)."""
    return example_site.site_dir


def test_metrics_on_hand_made_results() -> None:
    def result(
        kind: str,
        expected: tuple[str, ...],
        ranks: dict[str, int | None],
        answerable: bool,
        in_scope: bool = True,
    ) -> retrieval_eval.QuestionResult:
        q = RetrievalQuestion(kind, "q", expected, kind, in_scope=in_scope)
        r = retrieval_eval.QuestionResult(q, answerable, {"coverage": 0.5, "cosine": 0.3})
        r.ranks = ranks
        r.top = {m: ["x"] for m in retrieval_eval.MODES}
        r.latency_ms = dict.fromkeys(retrieval_eval.MODES, 1.0)
        return r

    results = [
        result("a", ("p",), {"bm25": 1, "dense": 5, "hybrid": 2}, True),
        result("b", ("p",), {"bm25": None, "dense": 1, "hybrid": 11}, False),
        result("oos", (), dict.fromkeys(retrieval_eval.MODES), False, in_scope=False),
        result("oos", (), dict.fromkeys(retrieval_eval.MODES), True, in_scope=False),
    ]
    summary = retrieval_eval.summarise(results)
    hybrid = summary["modes"]["hybrid"]
    assert hybrid["ranking"]["recall@1"] == 0.0
    assert hybrid["ranking"]["recall@4"] == 0.5
    assert hybrid["ranking"]["mrr"] == pytest.approx(0.25 + 1 / 22)
    assert summary["modes"]["dense"]["end_to_end"]["recall@4"] == 0.0
    gate = summary["gate"]
    assert gate["pass_precision"] == 0.5 and gate["pass_recall"] == 0.5
    assert gate["refuse_precision"] == 0.5 and gate["refuse_recall"] == 0.5
    findings = retrieval_eval.findings(summary)
    assert ">= best single mode" in findings[0]
    assert "mrr 0.295 is BELOW dense 0.600; it falls behind on: b" in findings[1]
    records = retrieval_eval.question_records(results)
    assert [r["score"] for r in records] == [1, 0, 1, 0]
    assert any("gate refused an in-scope question" in n for n in records[1]["notes"])


@pytest.mark.slow
def test_retrieval_eval_on_the_example_site(example_dir: Path, tmp_path: Path) -> None:
    artifact, _ = load_artifact(example_dir)
    known = {s["id"] for s in artifact["sources"]} | {s["path"] for s in artifact["sources"] if s["path"]}
    for item in load_battery().items:
        missing = set(item.sources) - known
        assert not missing, f"{item.id}: {sorted(missing)} not in the artifact"

    questions = load_questions(BATTERY)
    results = retrieval_eval.run(example_dir, questions)
    doc = retrieval_eval.report(example_dir, BATTERY, questions, results, "test")
    assert (doc["artifact"]["sources"], doc["artifact"]["passages"]) == (
        len(artifact["sources"]), len(artifact["passages"]))
    modes = doc["summary"]["modes"]
    for mode in retrieval_eval.MODES:
        ranking = modes[mode]["ranking"]
        assert 0.0 <= ranking["recall@1"] <= ranking["recall@4"] <= ranking["recall@10"] <= 1.0
    assert modes["hybrid"]["ranking"]["recall@10"] >= 0.9
    by_id = {r.question.id: r for r in results}
    for item_id in ("gibberish-01", "refuse-01"):
        assert not by_id[item_id].answerable, item_id
    assert by_id["lookup-01"].answerable
    assert doc["dataset"]["questions"] == len(questions)
    assert len(doc["artifact"]["sha256"]) == 64
    json_path, md_path = report.write(doc, tmp_path, "retrieval-test")
    assert "recall@4" in md_path.read_text()
    assert "hybrid" in report.compare(doc, json.loads(json_path.read_text()))


@pytest.mark.slow
def test_llama_engine_uses_the_gateway_prompt(example_dir: Path) -> None:
    import httpx

    from site_knowledge.evals.engines import LlamaEngine
    from site_knowledge.gateway import prompt

    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/input_tokens"):
            return httpx.Response(200, json={"input_tokens": 900})
        body = json.loads(request.content)
        seen.append(body)
        return httpx.Response(
            200,
            json={"choices": [{"message": {"content": "Fennec Systems [1]."}, "finish_reason": "stop"}]},
        )

    engine = LlamaEngine("http://llama", example_dir, transport=httpx.MockTransport(handler))
    items = {i.id: i for i in load_battery("v1").items}
    answer = engine.ask(items["lookup-01"])
    assert answer.text == "Fennec Systems [1]." and answer.citations[0].n == 1
    assert answer.evidence and answer.evidence[0] == answer.citations[0]  # the passages it was given
    system = seen[0]["messages"][0]  # type: ignore[index]
    assert system["content"] == engine.index.artifact["prompt"]["system"]
    messages: list[dict[str, str]] = seen[0]["messages"]  # type: ignore[assignment]
    assert seen[0] == {**prompt.answer_payload(messages, slot=1, max_tokens=256), "stream": False}
    assert "Question: Where does Teo work now?" in seen[0]["messages"][-1]["content"]  # type: ignore[index]
    refused = engine.ask(items["gibberish-01"])
    assert refused.refused and len(seen) == 1


def test_sets_table_has_a_row_per_set_and_mode_and_the_gate_rates() -> None:
    from evals.retrieval_sets import table

    q = RetrievalQuestion("p", "q", ("a.md",), "paraphrase")
    off = RetrievalQuestion("o", "q", (), "off_topic", in_scope=False)
    results = []
    for question, answerable, rank in ((q, True, 2), (off, True, None)):
        r = retrieval_eval.QuestionResult(question, answerable, {})
        r.ranks = dict.fromkeys(retrieval_eval.MODES, rank)
        r.top = {m: [] for m in retrieval_eval.MODES}
        r.latency_ms = dict.fromkeys(retrieval_eval.MODES, 1.0)
        results.append(r)
    doc = {"summary": retrieval_eval.summarise(results),
           "configuration": {"gate": {"min_coverage": 0.5, "min_cosine": 0.2, "strong_cosine": 0.4}}}
    text = table({"site-a": doc})
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == len(retrieval_eval.MODES)
    assert rows[0].startswith("| site-a (1 ranked) | bm25 | 0.000 | 1.000 | 1.000 | 0.500 | 1.000 (1)")
    assert "100.0% (1/1) | 0.0% (0/1) |" in rows[0]
    assert "site-a: min_coverage 0.5, min_cosine 0.2, strong_cosine 0.4" in text


def test_corpus_plugins_keep_their_own_and_add_site_knowledge_once(tmp_path: Path) -> None:
    from evals.sites import SITES, plugins_with_site_knowledge

    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: x\nplugins:\n  - search\n  - blog:\n      blog_dir: .\n"
                      "  - site-knowledge:\n      ontology: o.py\n")
    assert plugins_with_site_knowledge(config, {"chat": False}) == [
        "search", {"blog": {"blog_dir": "."}}, {"site-knowledge": {"ontology": "o.py", "chat": False}}]
    (tmp_path / "bare.yml").write_text("site_name: y\n")
    assert plugins_with_site_knowledge(tmp_path / "bare.yml", {}) == ["search", "site-knowledge"]
    assert plugins_with_site_knowledge(SITES["drf-docs"].config_file, {})[-1] == "site-knowledge"
