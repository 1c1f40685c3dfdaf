"""Python retrieval: the shared ranking vectors, modes, follow-ups, the gate, other weights."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from site_knowledge.retrieval import ArtifactError, KnowledgeIndex, load_index
from site_knowledge.retrieval.artifact import load_artifact
from site_knowledge.retrieval.gate import OPEN_GATE
from site_knowledge.retrieval.index import gate_query, refers_back, retrieval_query

DATA = Path(__file__).parent / "data"
VECTORS = json.loads((DATA / "retrieval_vectors.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fixture_index():
    return load_index(DATA / VECTORS["artifact"])


def test_shared_ranking_vectors(fixture_index):
    ungated = KnowledgeIndex({**fixture_index.artifact, "gate": OPEN_GATE},
                             load_artifact(DATA / VECTORS["artifact"])[1], fixture_index.encoder)
    for case in VECTORS["ranking"]:
        vector = np.array(case["query_vector"], dtype=np.float32)
        assert gate_query(case["question"], case["history"], 1) == case["query"]
        kept = fixture_index.words.without_unknown(case["question"])
        assert retrieval_query(kept, case["history"], 1) == case.get("ranking_query", case["query"])
        lang = case.get("lang")
        gated = fixture_index.search(case["question"], case["history"], query_vector=vector,
                                     lang=lang)
        assert gated.answerable == case["answerable"]
        assert gated.gate == case["gate"]
        assert gated.lang == case["kept_to"]
        for mode, expected in case["modes"].items():
            result = ungated.search(case["question"], case["history"], mode, 4,
                                    query_vector=vector, lang=case["kept_to"])
            assert [h.passage.id for h in result.hits] == expected, (case["question"], mode)


def test_query_embedding_matches_the_recorded_vectors(fixture_index):
    case = VECTORS["ranking"][0]
    vector = fixture_index.embed(gate_query(case["question"], case["history"], 1))
    assert float(vector @ np.array(case["query_vector"], dtype=np.float32)) > 0.9999


def test_follow_up_is_retrieved_with_the_earlier_question():
    assert retrieval_query("Where was he then?", ["Where did Teo work in 2019?"], 1) == (
        "Where did Teo work in 2019? Where was he then?")
    assert retrieval_query("Hi", ["a", "b"], 0) == "Hi"
    assert retrieval_query("Hi", ["a", "  ", "?!"], 1) == "a Hi"


@pytest.mark.parametrize(("question", "points_back"), [
    ("And who coined it?", True),
    ("Can I run that on a Raspberry Pi too?", True),
    ("What about the database?", True),
    ("Why?", True),
    ("What is the capital of France?", False),
    ("How do I install NetBox on Debian?", False),
])
def test_only_a_question_that_refers_back_is_gated_with_the_earlier_one(question, points_back):
    assert refers_back(question) is points_back
    joined = retrieval_query(question, ["What is slotmeter?"], 1)
    assert joined == f"What is slotmeter? {question}", "the ranking reads the conversation"
    assert gate_query(question, ["What is slotmeter?"], 1) == (joined if points_back else question)


def test_a_standalone_off_topic_question_after_on_topic_ones_is_gated_alone(example_index):
    history = ["Where does Teo work now?", "What is slotmeter?"]
    assert example_index.search("What is slotmeter?", history).answerable
    assert not example_index.search("What is the capital of France?", history).answerable


def test_unknown_mode_is_an_error(fixture_index):
    with pytest.raises(ValueError, match="unknown mode"):
        fixture_index.search("racks", mode="magic")  # type: ignore[arg-type]


def _copy_fixture(tmp_path: Path) -> Path:
    target = tmp_path / "artifact"
    shutil.copytree(DATA / "fixture-artifact", target)
    return target / "site-knowledge.json"


def test_readers_reject_other_embedding_weights(tmp_path):
    path = _copy_fixture(tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["embedding"]["weights_sha256"] = "0" * 64
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ArtifactError, match="different model weights"):
        load_index(path).search("racks")


def test_fiction_is_demoted_unless_both_rankings_put_it_first(example_site):
    index = KnowledgeIndex.load(example_site.artifact_path)
    about_it = index.search("Does Teo keep the lighthouse on Texel?").hits
    assert about_it[0].source.authority == "fiction" and "Texel" in about_it[0].passage.text
    assert (about_it[0].bm25_rank, about_it[0].dense_rank) == (1, 1)
    real = index.search("Where did Teo study?").hits
    assert all(hit.source.authority != "fiction" for hit in real)


def test_the_best_page_keeps_a_second_passage_nearly_as_strong_but_an_ontology_category_does_not(
        example_site):
    index = KnowledgeIndex.load(example_site.artifact_path)
    settings = index.artifact["retrieval"]
    assert (settings["lead_passages"], settings["lead_share"]) == (2, 0.98)
    question = "How much downtime had been planned for the PostgreSQL upgrade that pg-shadow rehearsed?"
    hits = index.search(question).hits
    assert [h.source.id for h in hits[:2]] == ["blog-posts-pg-shadow"] * 2
    assert hits[1].score >= 0.98 * hits[0].score and len({h.source.id for h in hits}) == 3
    settings["lead_share"] = hits[1].score / hits[0].score + 0.001
    assert len({h.source.id for h in index.search(question).hits}) == 4
    settings["per_page_cap"] = 4
    uncapped = [hit.source for hit in index.search("What did Teo study in Budapest?").hits]
    assert uncapped[0].kind == "ontology" and uncapped[1] == uncapped[0]
    settings["per_page_cap"], settings["lead_share"] = 1, 0.0
    facts = [hit.source for hit in index.search("What did Teo study in Budapest?").hits]
    assert facts[0] == uncapped[0] and facts.count(facts[0]) == 1


def test_fiction_keeps_its_score_when_both_rankings_put_its_section_first(example_site):
    index = KnowledgeIndex.load(example_site.artifact_path)
    hits = index.search("What is the fourteen-minute rule?").hits
    assert "fourteen minutes" in hits[0].passage.text and hits[0].source.authority == "fiction"
    assert 1 in (hits[0].bm25_rank, hits[0].dense_rank) and (hits[0].bm25_rank, hits[0].dense_rank) != (1, 1)


def test_a_name_the_site_never_uses_leaves_the_ranking_but_not_the_gate(example_index):
    """The site never says "MBA": the question ranks as if it were not there (the thesis, not
    the skills section), while the gate still reads it, so "Spotify" keeps a question out."""
    premise = example_index.search("What was Teo's MBA thesis about?")
    plain = example_index.search("What was Teo's thesis about?")
    assert [h.passage.id for h in premise.hits] == [h.passage.id for h in plain.hits]
    assert any("thesis" in h.passage.text for h in premise.hits)
    assert premise.gate["coverage"] < plain.gate["coverage"]
    assert not example_index.search("What did Teo build at Spotify?").answerable
    assert example_index.search("What did Teo build at?").answerable
