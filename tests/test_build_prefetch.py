"""Background embedding while pages render: real drf-docs pages, the real encoder."""

from __future__ import annotations

from pathlib import Path

import markdown
import pytest

from site_knowledge.build import artifact_cache
from site_knowledge.build.compiler import BuildOptions, PageInput, PromptParts, compile_knowledge
from site_knowledge.build.embed_cache import EmbeddingCache
from site_knowledge.build.model import BuildError
from site_knowledge.build.prefetch import EmbeddingPrefetch
from site_knowledge.build.writer import Sidecars
from site_knowledge.embedding import Encoder

DOCS = Path(__file__).parent / "corpora" / "drf-docs" / "docs" / "tutorial"
PROMPT = PromptParts("You answer from the excerpts.", "Not on this site.", "No model.")


def _pages(count: int) -> list[PageInput]:
    pages = []
    for path in sorted(DOCS.glob("*.md"))[:count]:
        html = markdown.markdown(path.read_text(encoding="utf-8"),
                                 extensions=["toc", "fenced_code", "tables"])
        pages.append(PageInput(f"tutorial/{path.name}", f"tutorial/{path.stem}/", path.stem,
                               "", html))
    return pages


def test_prefetched_passages_are_embedded_once_and_counted_in_the_build(tmp_path):
    cache = EmbeddingCache(Encoder(), tmp_path / "cache")
    prefetch = EmbeddingPrefetch.start_if_cold(cache, 900)
    assert prefetch is not None
    pages = _pages(3)
    for page in pages:
        prefetch.submit(page)
    prefetch.finish()
    assert prefetch.failure is None
    prefetched = cache.misses
    report = compile_knowledge(pages, [], PROMPT, BuildOptions("DRF", "", tmp_path / "out"), cache)
    assert report.passages == prefetched > 20, "the prefetch embedded every passage"
    assert report.embedded == prefetched and report.cache_hits == 0


def test_a_cache_that_holds_a_compile_result_does_not_prefetch(tmp_path):
    cache = EmbeddingCache(Encoder(), tmp_path / "cache")
    artifact_cache.store(cache.directory, artifact_cache.input_key("a build"), {}, Sidecars(b"", b""))
    assert EmbeddingPrefetch.start_if_cold(cache, 900) is None


def test_a_page_the_worker_cannot_cut_is_left_to_the_compiler(tmp_path):
    cache = EmbeddingCache(Encoder(), tmp_path / "cache")
    prefetch = EmbeddingPrefetch.start_if_cold(cache, 900)
    assert prefetch is not None
    bad = PageInput("escape.md", "../outside/", "Escape", "", "<p>Out of the site.</p>")
    prefetch.submit(bad)
    prefetch.submit(_pages(1)[0])
    prefetch.finish()
    assert isinstance(prefetch.failure, BuildError)
    with pytest.raises(BuildError, match=r"escape\.md: URL '\.\./outside/' is outside the site"):
        compile_knowledge([bad], [], PROMPT, BuildOptions("DRF", "", tmp_path / "out"), cache)
