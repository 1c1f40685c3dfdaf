"""The sharded artifact: shards that hold exactly the whole, bad input named, the layout
written and removed, and the box's shard search equal to its single-file search (node)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from browser_sites import REPO, run_node

from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.shards import (
    MANIFEST_NAME,
    SHARD_DIR,
    ShardSizes,
    shard_artifact,
    write_layout,
)
from site_knowledge.retrieval.artifact_form import expand, passage_count
from site_knowledge.retrieval.lexical import BM25
from site_knowledge.retrieval.tokenizer import indexed_text, tokenize

FIXTURE = REPO / "tests" / "data" / "fixture-artifact"
SMALL = ShardSizes(lexical_bytes=200, fragment_bytes=300, whole_rows_bytes=0, partition_rows=2,
                   probes=2)
"""Sizes that cut the seven-passage fixture into several shards of every kind."""
WHOLE = replace(SMALL, whole_rows_bytes=ShardSizes().whole_rows_bytes)
"""The same with the vectors read whole (the default for all but very large sites)."""


def shard_files(shards: dict[str, Any]) -> set[str]:
    """Every file a manifest's shards name."""
    dense = shards["dense"]
    return {*shards["lexical"]["files"], shards["lexical"]["lengths"], *shards["text"]["files"],
            *dense.get("files", []), *(dense[k] for k in ("centroids", "pages") if k in dense)}


def fixture() -> tuple[dict[str, Any], bytes]:
    on_disk = json.loads((FIXTURE / "site-knowledge.json").read_text(encoding="utf-8"))
    return on_disk, (FIXTURE / on_disk["vectors"]["file"]).read_bytes()


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site-knowledge"
    shutil.copytree(FIXTURE, folder)
    return folder


def test_the_shards_hold_every_term_passage_and_vector_once() -> None:
    on_disk, vectors = fixture()
    manifest, files = shard_artifact(on_disk, vectors, SMALL)
    shards = manifest["shards"]
    document = expand(on_disk)
    per_source = [sum(p["source"] == s["id"] for p in document["passages"])
                  for s in document["sources"]]
    assert manifest["counts"] == {"sources": len(on_disk["sources"]),
                                  "passages": passage_count(on_disk), "per_source": per_source}
    assert manifest["source_langs"] == [s["lang"] for s in document["sources"]]
    assert len(shards["lexical"]["files"]) > 1 and len(shards["text"]["files"]) > 1
    assert len(shards["dense"]["files"]) > 1
    assert set(files) == shard_files(shards)
    titles = {s["id"]: s["title"] for s in document["sources"]}
    docs = [tokenize(indexed_text(titles[p["source"]], p["heading"], p["text"]),
                     frozenset(on_disk["lexical"]["stopwords"])) for p in document["passages"]]
    bm25 = BM25(docs, 1.2, 0.75)
    terms = {entry[0]: len(entry[1]) for name in shards["lexical"]["files"]
             for entry in json.loads(files[name])}
    assert terms == {t: bm25.document_frequency(t) for t in bm25.vocabulary()}
    fragments = [s for name in shards["text"]["files"] for s in json.loads(files[name])]
    assert fragments == on_disk["sources"]
    seen = []
    for name in shards["dense"]["files"]:
        count = int.from_bytes(files[name][:4], "little")
        seen += [int.from_bytes(files[name][4 + 4 * i:8 + 4 * i], "little") for i in range(count)]
    assert sorted(seen) == list(range(passage_count(on_disk)))
    assert "sources" not in manifest and "vectors" not in manifest


def test_vectors_up_to_whole_rows_bytes_are_read_from_the_sidecar() -> None:
    on_disk, vectors = fixture()
    manifest, files = shard_artifact(on_disk, vectors, WHOLE)
    assert manifest["shards"]["dense"] == {"rows": on_disk["vectors"]["file"]}
    assert set(files) == shard_files(manifest["shards"])
    manifest, _ = shard_artifact(on_disk, vectors, replace(WHOLE, whole_rows_bytes=len(vectors) - 1))
    assert "rows" not in manifest["shards"]["dense"]


def test_vectors_that_do_not_match_the_passages_are_named() -> None:
    on_disk, vectors = fixture()
    with pytest.raises(BuildError, match=f"{MANIFEST_NAME}.*vectors sidecar has"):
        shard_artifact(on_disk, vectors[:-1], SMALL)


def test_a_site_without_passages_cannot_be_sharded() -> None:
    on_disk, _ = fixture()
    on_disk["sources"] = []
    on_disk["vectors"]["count"] = 0
    with pytest.raises(BuildError, match="no passages to shard"):
        shard_artifact(on_disk, b"", SMALL)


@pytest.mark.parametrize("field", ["lexical_bytes", "fragment_bytes", "partition_rows", "probes"])
def test_a_size_below_one_is_named(field: str) -> None:
    with pytest.raises(BuildError, match=f"{field} must be at least 1, not 0"):
        ShardSizes(**{field: 0})


def test_the_layout_is_written_then_removed_with_its_stale_shards(site: Path) -> None:
    written = write_layout(site / "site-knowledge.json", True, SMALL)
    on_disk = [site / MANIFEST_NAME, *(site / SHARD_DIR).iterdir()]
    assert written == sum(path.stat().st_size for path in on_disk)
    stale = site / SHARD_DIR / "0000000000000000.text.json"
    stale.write_text("[]")
    write_layout(site / "site-knowledge.json", True)
    assert not stale.exists()
    manifest = json.loads((site / MANIFEST_NAME).read_text())
    assert all((site / name).exists() for name in manifest["shards"]["text"]["files"])
    assert write_layout(site / "site-knowledge.json", False) == 0
    assert not (site / MANIFEST_NAME).exists() and not (site / SHARD_DIR).exists()
    assert (site / "site-knowledge.json").exists()


@pytest.mark.parametrize("sizes", [WHOLE, SMALL], ids=["whole", "partitioned"])
def test_the_box_searches_the_shards_as_it_searches_the_single_file(
        site: Path, sizes: ShardSizes) -> None:
    write_layout(site / "site-knowledge.json", True, sizes)
    got = run_node("shards_compare.mjs", str(site))
    assert got["queries"] == 7
    assert got["same_top"] == got["same_gate"] == got["same_results"] == got["queries"]
    assert got["same_words"] == got["words"] > 20


@pytest.mark.slow
def test_a_corpus_built_sharded_gets_its_shards_and_a_rebuild_copies_them_from_the_memo(
        tmp_path: Path) -> None:
    from evals.sites import SITES, build

    assets = build(SITES["drf-docs"], tmp_path / "site", artifact="sharded") / "assets" / "site-knowledge"
    manifest = json.loads((assets / MANIFEST_NAME).read_text(encoding="utf-8"))
    single = json.loads((assets / "site-knowledge.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["passages"] == passage_count(single)
    assert manifest["gate"] == single["gate"] and manifest["prompt"] == single["prompt"]
    named = shard_files(manifest["shards"])
    assert {f"{SHARD_DIR}/{p.name}" for p in (assets / SHARD_DIR).iterdir()} == named
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert f'"artifact":"{MANIFEST_NAME}"' in page
    shards = {p.name: p.read_bytes() for p in (assets / SHARD_DIR).iterdir()}
    build(SITES["drf-docs"], tmp_path / "site", artifact="sharded")
    again = json.loads((assets / MANIFEST_NAME).read_text(encoding="utf-8"))
    rebuilt = json.loads((assets / "site-knowledge.json").read_text(encoding="utf-8"))
    assert again["built_at"] == rebuilt["built_at"] != single["built_at"]
    assert {**again, "built_at": ""} == {**manifest, "built_at": ""}
    assert {p.name: p.read_bytes() for p in (assets / SHARD_DIR).iterdir()} == shards
