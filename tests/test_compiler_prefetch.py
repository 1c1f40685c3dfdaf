"""Background embedding while pages render: real drf-docs pages, the real encoder."""

from __future__ import annotations

import time
from pathlib import Path

import markdown
import pytest

from site_knowledge.compiler import artifact_cache
from site_knowledge.compiler.compiler import BuildOptions, PageInput, PromptParts, compile_knowledge
from site_knowledge.compiler.embed_cache import EmbeddingCache
from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.offtopic import offtopic_questions
from site_knowledge.compiler.prefetch import BATCH, SLICE, EmbeddingPrefetch
from site_knowledge.compiler.writer import Sidecars
from site_knowledge.embedding import Encoder

DOCS = Path(__file__).parent / "corpora" / "drf-docs" / "docs" / "api-guide"
PROMPT = PromptParts("You answer from the excerpts.", "Not on this site.", "No model.")


def _pages(count: int) -> list[PageInput]:
    pages = []
    for path in sorted(DOCS.glob("*.md"))[:count]:
        html = markdown.markdown(path.read_text(encoding="utf-8"),
                                 extensions=["toc", "fenced_code", "tables"])
        pages.append(PageInput(f"api-guide/{path.name}", f"api-guide/{path.stem}/", path.stem,
                               "", html))
    return pages


def _until(ready, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.05)


def _submitted(tmp_path: Path, pages: list[PageInput]) -> tuple[EmbeddingCache, EmbeddingPrefetch]:
    cache = EmbeddingCache(Encoder(), tmp_path / "cache")
    prefetch = EmbeddingPrefetch.start_if_cold(cache, 900)
    assert prefetch is not None
    for page in pages:
        prefetch.submit(page)
    return cache, prefetch


def test_pages_are_embedded_while_rendering_goes_on_and_each_passage_once(tmp_path):
    pages = _pages(7)  # 166 passages: more than one BATCH
    cache, prefetch = _submitted(tmp_path, pages)
    offtopic = len(offtopic_questions())
    _until(lambda: cache.misses > offtopic)
    assert cache.misses > offtopic, "the worker embeds pages before rendering ends"
    prefetch.finish()
    assert prefetch.failure is None
    prefetched = cache.misses - offtopic
    report = compile_knowledge(pages, [], PROMPT, BuildOptions("DRF", "", tmp_path / "out"), cache)
    assert report.passages > BATCH
    assert report.embedded == report.passages, "the worker's and the compiler's share, once each"
    assert report.cache_hits == 0 and 0 < prefetched <= report.passages


def test_before_the_first_page_the_worker_opens_both_sessions_and_embeds_the_offtopic_questions(
        tmp_path):
    cache = EmbeddingCache(Encoder(), tmp_path / "cache")
    prefetch = EmbeddingPrefetch.start_if_cold(cache, 900)
    assert prefetch is not None
    offtopic = offtopic_questions()
    _until(lambda: cache.misses >= len(offtopic))
    prefetch.finish()
    assert prefetch.failure is None
    assert cache.encoder.loaded, "the compiler's two-thread session is open before it is needed"
    assert cache.misses == len(offtopic)
    cache.embed(offtopic)
    assert cache.misses == len(offtopic), "the gate's calibration finds them in the cache"


def test_the_end_of_rendering_stops_the_worker_after_one_slice(tmp_path):
    pages = _pages(7)
    cache, prefetch = _submitted(tmp_path, pages)
    prefetch.finish()
    assert prefetch.failure is None
    assert cache.misses <= SLICE, "the queued pages are left to the compiler"
    report = compile_knowledge(pages, [], PROMPT, BuildOptions("DRF", "", tmp_path / "out"), cache)
    assert report.passages > BATCH and report.embedded == report.passages


def test_a_cache_that_holds_a_compile_result_does_not_prefetch(tmp_path):
    cache = EmbeddingCache(Encoder(), tmp_path / "cache")
    artifact_cache.store(cache.directory, artifact_cache.input_key("a build"),
                         artifact_cache.Memo(b"{}", Sidecars(b"", b""), 0, 0))
    assert EmbeddingPrefetch.start_if_cold(cache, 900) is None


def test_a_page_the_worker_cannot_cut_is_left_to_the_compiler(tmp_path):
    bad = PageInput("escape.md", "../outside/", "Escape", "", "<p>Out of the site.</p>")
    cache, prefetch = _submitted(tmp_path, [bad, _pages(1)[0]])
    _until(lambda: prefetch.failure is not None)
    prefetch.finish()
    assert isinstance(prefetch.failure, BuildError)
    with pytest.raises(BuildError, match=r"escape\.md: URL '\.\./outside/' is outside the site"):
        compile_knowledge([bad], [], PROMPT, BuildOptions("DRF", "", tmp_path / "out"), cache)
