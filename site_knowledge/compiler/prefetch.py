"""Embed pages on a background thread while the site generator renders the rest.

Most of a cold build is embedding, and MkDocs renders on one core. Each rendered page is
handed to a worker that cuts it into passages and embeds them on one core of its own (ONNX
Runtime releases the GIL), so embedding starts before the last page is rendered. Before the
first page arrives it prepares the model, opens both sessions (its own and the compiler's) and
embeds the packaged off-topic questions the gate's calibration scores, so a build from an empty
cache prepares the model while MkDocs reads the pages. When rendering ends the worker stops
after the slice in hand and the compiler embeds what it did not reach on every core, finding
the worker's vectors in the embedding cache. One thread for the worker and not two: ONNX
Runtime's two-thread pool waits at every operator for whichever of its threads MkDocs has
displaced. Only a cache folder without any previous compile result prefetches: a warm build
reuses its memo and should cut no page at all.
"""

from __future__ import annotations

import queue
import threading

from site_knowledge.compiler import artifact_cache
from site_knowledge.compiler.chunking import source_passages
from site_knowledge.compiler.compiler import PageInput, embedded_texts, page_source
from site_knowledge.compiler.embed_cache import EmbeddingCache
from site_knowledge.compiler.offtopic import offtopic_questions

BATCH = 128
"""Texts gathered and sorted by length before they are embedded, so batches pad little."""
SLICE = 16
"""Texts embedded between checks for the end of rendering: under a second on one core."""


class EmbeddingPrefetch:
    """A worker thread that embeds submitted pages into an :class:`EmbeddingCache`.

    The cache must not be used elsewhere until :meth:`finish` returns. A page the worker
    cannot cut or embed, or does not reach, is left to the compiler, which reports a failure
    with its file.
    """

    def __init__(self, cache: EmbeddingCache, chunk_size: int) -> None:
        self._cache = cache
        self._encoder = cache.encoder.with_threads(1)
        self._chunk_size = chunk_size
        self._pages: queue.SimpleQueue[PageInput | None] = queue.SimpleQueue()
        self._rendered = threading.Event()
        self._thread = threading.Thread(target=self._run, name="site-knowledge-prefetch",
                                        daemon=True)
        self.failure: Exception | None = None
        self._thread.start()

    @classmethod
    def start_if_cold(cls, cache: EmbeddingCache, chunk_size: int) -> EmbeddingPrefetch | None:
        """A started prefetch, or None when the cache folder already holds a compile result."""
        if artifact_cache.has_entries(cache.directory):
            return None
        return cls(cache, chunk_size)

    def submit(self, page: PageInput) -> None:
        """Queue a rendered page."""
        self._pages.put(page)

    def finish(self) -> None:
        """Stop the worker after the slice in hand; what it did not embed is the compiler's."""
        self._rendered.set()
        self._pages.put(None)
        self._thread.join()

    def _run(self) -> None:
        pending: list[str] = []
        try:
            self._encoder.load()
            self._cache.encoder.load()
            self._embed_until_rendered(offtopic_questions())
            while not self._rendered.is_set() and (page := self._pages.get()) is not None:
                source = page_source(page)
                pending.extend(embedded_texts(source, source_passages(source, self._chunk_size)))
                if len(pending) >= BATCH:
                    self._embed_until_rendered(sorted(pending, key=len))
                    pending = []
        except Exception as error:  # the compiler redoes the work and reports it
            self.failure = error

    def _embed_until_rendered(self, texts: list[str]) -> None:
        for start in range(0, len(texts), SLICE):
            if self._rendered.is_set():
                return
            self._cache.embed(texts[start : start + SLICE], encoder=self._encoder)
