"""The build-scale benchmark's parts: the plugin's config beside the site, the one-page edit,
passage counts, scaling rows and the report; and one real measurement of a tiny site."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchmarks.bench_build_scale import (
    EDIT,
    KINDS,
    edit_one_page,
    markdown,
    measure_size,
    passage_counts,
    plugin_config,
    scaling,
)
from benchmarks.synthetic_site import make_site

CORPORA = Path(__file__).resolve().parent / "corpora"


def test_the_plugin_config_builds_the_same_docs_with_the_plugin_last(tmp_path):
    site = make_site(CORPORA, tmp_path / "site", 5)
    config = yaml.safe_load(plugin_config(site.config_file, tmp_path / "cache").read_text())
    assert config["docs_dir"] == str(tmp_path / "site" / "docs")
    assert config["plugins"][0] == "search"
    assert config["plugins"][-1] == {"site-knowledge": {"chat": False, "artifact": "single",
                                                        "cache_dir": str(tmp_path / "cache")}}
    assert config["nav"] == ["index.md"]


def test_one_page_of_copy_zero_gets_the_sentence(tmp_path):
    site = make_site(CORPORA, tmp_path / "site", 5)
    docs = site.config_file.parent / "docs"
    before = {p: p.read_text() for p in docs.rglob("*.md")}
    edited = edit_one_page(docs)
    assert edited.relative_to(docs).parts[0] == "copy-000"
    assert edited.read_text() == before[edited] + EDIT
    assert all(p.read_text() == text for p, text in before.items() if p != edited)


def test_passages_are_counted_whole_and_by_embedded_text():
    artifact = {"sources": [{"id": "a", "title": "A"}, {"id": "b", "title": "A"},
                            {"id": "c", "title": "C"}],
                "passages": [{"source": "a", "heading": "H", "text": "x"},
                             {"source": "b", "heading": "H", "text": "x"},
                             {"source": "c", "heading": "H", "text": "x"},
                             {"source": "a", "heading": "", "text": "x"}]}
    assert passage_counts(artifact) == (4, 3)


def _row(pages: int, passages: int, wall: float, first: str = "cold") -> dict:
    other = "seeded" if first == "cold" else "cold"
    runs = {kind: {"wall": wall, "cpu": wall, "peak_rss_mib": 100.0}
            for kind in KINDS if kind != other}
    return {"pages": pages, "passages": passages, "unique_passages": passages // 2,
            "runs": runs, "ratio_wall": {first: 2.0}, "ratio_cpu": {first: 3.0},
            "artifact_bytes": 1, "bytes_per_passage_beyond_text": 420.0,
            f"{first}_seconds_per_unique_passage": 0.01, "copies": 1, "fastapi_whole": False}


def test_scaling_is_seconds_per_thousand_and_the_report_has_a_row_per_build():
    rows = [_row(1000, 10000, 20.0), _row(3000, 20000, 60.0), _row(10000, 80000, 200.0, "seeded")]
    assert scaling(rows)["wall s per 1,000 pages"]["cold"] == [20.0, 20.0, None]
    assert scaling(rows)["cpu s per 1,000 pages"]["seeded"] == [None, None, 20.0]
    assert scaling(rows)["wall s per 1,000 passages"]["plain"] == [2.0, 3.0, 2.5]
    page = markdown({"how": "How.", "command": "c", "load_average_before_after": [1, 2],
                     "sizes": rows, "scaling": scaling(rows), "notes": ["A note."]})
    assert page.count("| 1000 | 10000 (5000) |") == len(KINDS) - 1
    assert "| 3000 | 20000 (10000) | cold | 60.0 | 60.0 | 100 | 2.0 | 3.0 |" in page
    assert "| 10000 | 80000 (40000) | seeded | 200.0 | 200.0 | 100 | 2.0 | 3.0 |" in page
    assert "| 10000 | 1 | 420.0 | seeded: 0.01 | 1 | False |" in page
    assert page.endswith("A note.\n")


@pytest.mark.slow
def test_a_tiny_site_is_measured_plain_cold_warm_edited_and_plain_again(tmp_path):
    row = measure_size(CORPORA, tmp_path, 6)
    assert set(row["runs"]) == set(KINDS) - {"seeded"}
    assert all(run["peak_rss_mib"] > 10 and run["wall"] > 0 for run in row["runs"].values())
    assert row["passages"] >= row["unique_passages"] > 0
    assert 300 < row["bytes_per_passage_beyond_text"] < 2000
    assert (tmp_path / "site-6" / "docs" / row["edited_page"]).read_text().endswith(EDIT)
