"""``site-knowledge query``: the JSON contract others script against, batch mode, errors."""

from __future__ import annotations

import json

from site_knowledge.cli import main

KEYS = {"passage_id", "source_id", "path", "url", "title", "heading", "score", "bm25_rank",
        "dense_rank"}


def test_query_json_contract(example_site, capsys):
    assert main(["query", str(example_site.site_dir), "What is slotmeter?", "--json"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert set(output) == {"answerable", "gate", "results", "timing_ms"}
    assert output["answerable"] is True
    assert {"coverage", "cosine", "min_coverage", "min_cosine", "strong_cosine"} <= set(output["gate"])
    assert len(output["results"]) == 4
    assert all(set(r) == KEYS for r in output["results"])
    assert "projects/index.md" in [r["path"] for r in output["results"]]
    ontology = [r for r in output["results"] if r["source_id"] == "projects"]
    assert all(r["path"] is None for r in ontology)


def test_query_batch_prints_one_line_per_question(example_site, tmp_path, capsys):
    batch = tmp_path / "questions.txt"
    batch.write_text("Where does Teo live now?\n\nWhat is the capital of Australia?\n",
                     encoding="utf-8")
    path = str(example_site.artifact_path)
    assert main(["query", path, "--batch", str(batch), "--mode", "bm25", "--top-k", "2"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["answerable"] for line in lines] == [True, False]
    assert len(lines[0]["results"]) <= 2 and lines[1]["results"] == []


def test_query_errors_exit_2(tmp_path, capsys):
    assert main(["query", str(tmp_path / "missing"), "anything"]) == 2
    assert "no such artifact" in capsys.readouterr().err
    assert main(["query", str(tmp_path)]) == 2
