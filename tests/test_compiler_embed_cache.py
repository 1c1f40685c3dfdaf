"""The embedding cache on disk: a rebuild that embeds a few texts writes them to the delta file
and leaves the main file as it was; a later cache reads both without embedding; a delta over
DELTA_SHARE of the vectors is merged into the main file; an unreadable file is ignored."""

from __future__ import annotations

import numpy as np

from site_knowledge.compiler import embed_cache
from site_knowledge.compiler.embed_cache import EmbeddingCache
from site_knowledge.embedding import Encoder

FIRST = [f"Passage {n} about installing the gateway on host {n}." for n in range(30)]


def test_a_few_new_texts_go_to_the_delta_and_a_large_delta_is_merged(tmp_path):
    encoder = Encoder()
    cold = EmbeddingCache(encoder, tmp_path)
    expected = cold.embed(FIRST)
    cold.save()
    main = cold.path.read_bytes()
    assert not cold.delta_path.exists()

    edited = EmbeddingCache(encoder, tmp_path)
    one_more = edited.embed([*FIRST, "A sentence added to one page."])
    edited.save()
    assert (edited.misses, cold.path.read_bytes()) == (1, main), "the main file is not rewritten"
    with np.load(edited.delta_path) as delta:
        assert delta["keys"].shape == (1,)

    later = EmbeddingCache(encoder, tmp_path)
    assert np.array_equal(later.embed([*FIRST, "A sentence added to one page."]), one_more)
    assert later.misses == 0 and np.array_equal(one_more[:len(FIRST)], expected)

    many = [f"Another page's passage number {n}." for n in range(int(embed_cache.DELTA_SHARE * 31) + 1)]
    later.embed(many)
    later.save()
    assert not later.delta_path.exists() and cold.path.read_bytes() != main
    merged = EmbeddingCache(encoder, tmp_path)
    merged.embed([*FIRST, *many])
    assert merged.misses == 0


def test_an_unreadable_cache_file_is_ignored(tmp_path):
    cache = EmbeddingCache(Encoder(), tmp_path)
    cache.path.write_bytes(b"not a zip file")
    cache.delta_path.write_bytes(b"")
    cache.embed(FIRST[:2])
    assert cache.misses == 2
    cache.save()
    assert EmbeddingCache(Encoder(), tmp_path).embed(FIRST[:2]).shape == (2, 384)
