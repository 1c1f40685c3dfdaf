"""The knowledge compiler: published pages and an ontology in, one validated artifact out."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from site_knowledge import __version__
from site_knowledge.budgets import DEFAULT_BUDGETS
from site_knowledge.compiler import artifact_cache
from site_knowledge.compiler.chunking import merge_small_sections, page_sections, source_passages
from site_knowledge.compiler.embed_cache import EmbeddingCache
from site_knowledge.compiler.languages import main_language, page_languages
from site_knowledge.compiler.model import ID_PATTERN, Authority, BuildError, Passage, Source
from site_knowledge.compiler.section_cache import SectionCache
from site_knowledge.compiler.token_cache import TokenCache
from site_knowledge.compiler.writer import (
    Sidecars,
    prepare_artifact,
    serialized,
    with_built_at,
    write_prepared,
)
from site_knowledge.embedding import DIMENSION, MAX_TOKENS, MODEL_NAME, WEIGHTS_PACKAGE, Encoder
from site_knowledge.progress import ProgressBar, track
from site_knowledge.retrieval.artifact_form import SCHEMA_VERSION, passage_count, source_id_for
from site_knowledge.retrieval.tokenizer import STOPWORDS, TOKENIZER_VERSION, indexed_text

DEFAULT_RETRIEVAL = {
    "rrf_k": 30, "candidates": 100, "page_candidates": 50,
    "weights": {"bm25": 1.0, "dense": 1.0, "page_bm25": 1.0, "page_dense": 1.0},
    "per_page_cap": 1, "lead_passages": 2, "lead_share": 0.98, "followup_turns": 1,
    "authority": {"fact": 1.0, "prose": 1.0, "fiction": 0.5},
}


@dataclass(frozen=True)
class PageInput:
    """One published page as the site generator rendered it."""

    src_path: str
    url: str
    title: str
    description: str
    html: str
    authority: Authority = "prose"
    lang: str = ""
    """The language its front matter declares ("" when it declares none)."""


@dataclass(frozen=True)
class PromptParts:
    """The stable system prompt and the fixed sentences readers show."""

    system: str
    refusal: str
    no_model: str
    examples: str = ""
    """The worked examples inside ``system``: never facts about the site."""


@dataclass
class BuildOptions:
    """What the compiler needs besides the pages and ontology sources."""

    site_name: str
    site_url: str
    output_dir: Path
    chunk_size: int = 900
    budgets: dict[str, dict[str, int]] = field(default_factory=lambda: DEFAULT_BUDGETS)
    retrieval: dict[str, Any] = field(default_factory=lambda: DEFAULT_RETRIEVAL)
    language: str = ""
    """The theme's language: a page's when neither its front matter nor its folder says."""


@dataclass(frozen=True)
class BuildReport:
    """What one build did, for the summary line and for tests."""

    sources: int
    pages: int
    passages: int
    embedded: int
    cache_hits: int
    artifact_bytes: int
    vectors_bytes: int
    elsewhere_bytes: int
    seconds: float
    artifact_path: Path
    memo_key: str = ""
    """The whole-build memo's input key: what names this artifact's content."""
    built_at: str = ""


def check_site_url(url: str, where: str) -> None:
    """Reject a URL that leaves the site (scheme, host, absolute path, or ``..``)."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or url.startswith("/") or ".." in parts.path.split("/"):
        raise BuildError(where, f"URL {url!r} is outside the site")


def page_source(page: PageInput, reserved: frozenset[str] = frozenset(),
                cache: SectionCache | None = None) -> Source:
    """A published page as a ``page`` source with heading-aware sections (from ``cache`` when
    it has seen the page).

    A page whose id is taken by an ontology source (``projects.md`` beside the PROJECTS
    category) gets the id ``page-<id>``.
    """
    source_id = source_id_for(page.src_path)
    if source_id in reserved:
        source_id = f"page-{source_id}"
    check_site_url(page.url, page.src_path)
    sections = (cache.sections(page.html, page.title) if cache is not None
                else merge_small_sections(page_sections(page.html, page.title)))
    description = page.description or (sections[0].text[:200] if sections else "")
    return Source(source_id, "page", page.title, description, page.url, page.authority,
                  page.src_path, sections)


def embedded_texts(source: Source, passages: Sequence[Passage]) -> list[str]:
    """What is embedded for each of a source's passages: its indexed text (SPEC.md)."""
    return [indexed_text(source.title, p.heading, p.text) for p in passages]


def compile_knowledge(pages: Sequence[PageInput], ontology_sources: Sequence[Source],
                      prompt: PromptParts, options: BuildOptions,
                      cache: EmbeddingCache) -> BuildReport:
    """Compile sources into passages, vectors, gate and prompt; write the artifact atomically.

    Raises:
        BuildError: naming the file and the problem; nothing is written then.
    """
    started = time.perf_counter()
    key = artifact_cache.input_key(__version__, cache.encoder.weights_sha256, pages,
                                   ontology_sources, prompt, options.site_name, options.site_url,
                                   options.chunk_size, options.budgets, options.retrieval,
                                   options.language)
    memo = artifact_cache.load(cache.directory, key)
    if memo is not None:
        built_at = _now()
        memo = replace(memo, payload=with_built_at(memo.payload, built_at))
        embedded = 0
    else:
        document, sidecars, embedded = _compile(pages, ontology_sources, prompt, options, cache)
        on_disk = prepare_artifact(document, sidecars)
        built_at = on_disk["built_at"]
        memo = artifact_cache.Memo(serialized(on_disk), sidecars, len(on_disk["sources"]),
                                   passage_count(on_disk))
        artifact_cache.store(cache.directory, key, memo)
    artifact_path, artifact_bytes = write_prepared(memo.payload, memo.sidecars,
                                                   options.output_dir)
    return BuildReport(
        sources=memo.sources, pages=len(pages), passages=memo.passages,
        embedded=embedded, cache_hits=memo.passages - embedded,
        artifact_bytes=artifact_bytes, vectors_bytes=len(memo.sidecars.vectors),
        elsewhere_bytes=len(memo.sidecars.elsewhere),
        seconds=time.perf_counter() - started, artifact_path=artifact_path,
        memo_key=key, built_at=built_at,
    )


def _compile(pages: Sequence[PageInput], ontology_sources: Sequence[Source], prompt: PromptParts,
             options: BuildOptions, cache: EmbeddingCache) -> tuple[dict[str, Any], Sidecars, int]:
    # numpy and the gate's calibration load here, not at import: a warm build reuses its memo
    # and never needs them.
    from site_knowledge.compiler.calibrate import calibrate_gate
    from site_knowledge.retrieval.vectors import dequantize, quantize

    opening = _open_in_background(cache.encoder)
    reserved = frozenset(source.id for source in ontology_sources)
    site = f"{options.site_url} {options.site_name}"
    section_cache = SectionCache(cache.directory, site)
    sources = [*ontology_sources, *(page_source(page, reserved, section_cache) for page in
                                    track(pages, "site-knowledge: reading pages", "pages"))]
    _check_sources(sources)
    cut = [source_passages(source, options.chunk_size) for source in sources]
    passages = [p for source_cut in cut for p in source_cut]
    titles = {source.id: source.title for source in sources}
    texts = [text for source, source_cut in zip(sources, cut, strict=True)
             for text in embedded_texts(source, source_cut)]
    if opening is not None:
        opening.join()
    vectors_blob = quantize(cache.embed(texts, _progress_bar))
    embedded = cache.embedded_since_save(texts)
    vectors = dequantize(vectors_blob, len(passages), DIMENSION)
    stopwords = frozenset(STOPWORDS)
    token_cache = TokenCache(cache.directory, site, stopwords)
    tokens = token_cache.tokens(track(texts, "site-knowledge: tokenizing", "passages"))
    gate, reference = calibrate_gate(tokens,
                                     [p.heading or titles[p.source_id] for p in passages],
                                     vectors, stopwords, cache.embed)
    sidecars = Sidecars(vectors_blob, reference)
    cache.save()
    section_cache.save()
    token_cache.save()
    languages = [options.language] * len(ontology_sources) + page_languages(
        [page.src_path for page in pages], [page.lang for page in pages], options.language)
    return (_document(sources, languages, passages, prompt, options, gate, cache), sidecars,
            embedded)


def _open_in_background(encoder: Encoder) -> threading.Thread | None:
    """Open the encoder's session on another thread while the pages are cut (ONNX Runtime
    builds it mostly outside the GIL): a rebuild that embeds one edited passage no longer
    waits for it. A failure is left to the compiler's own first use, which reports it."""
    if encoder.loaded:
        return None

    def load() -> None:
        with contextlib.suppress(Exception):
            encoder.load()

    thread = threading.Thread(target=load, name="site-knowledge-encoder", daemon=True)
    thread.start()
    return thread


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _progress_bar(missing: int, total: int) -> Callable[[int], None]:
    bar = ProgressBar(f"site-knowledge: embedding {missing} of {total} passages", missing,
                      "passages")

    def advance(count: int) -> None:
        bar.advance(count)
        if bar.done >= bar.total:
            bar.close()

    return advance


def _check_sources(sources: Sequence[Source]) -> None:
    seen: dict[str, str] = {}
    for source in sources:
        where = source.path or f"ontology:{source.id}"
        if not ID_PATTERN.match(source.id) or "#" in source.id:
            raise BuildError(where, f"source id {source.id!r} is not a valid id")
        if source.id in seen:
            raise BuildError(where, f"duplicate source id {source.id!r} (also {seen[source.id]})")
        seen[source.id] = where
        check_site_url(source.url, where)


def _document(sources: Sequence[Source], languages: Sequence[str], passages: Sequence[Passage],
              prompt: PromptParts, options: BuildOptions, gate: dict[str, Any],
              cache: EmbeddingCache) -> dict[str, Any]:
    from site_knowledge.retrieval.lexical import K1, B
    from site_knowledge.retrieval.vectors import LAYOUT

    site_lang = main_language(languages)
    return {
        "schema": SCHEMA_VERSION,
        "generator": f"mkdocs-site-knowledge {__version__}",
        "built_at": _now(),
        "site": {"name": options.site_name, "url": options.site_url,
                 **({"lang": site_lang} if site_lang else {})},
        "embedding": {
            "model": MODEL_NAME, "weights": WEIGHTS_PACKAGE,
            "weights_sha256": cache.encoder.weights_sha256, "dimension": DIMENSION,
            "pooling": "mean", "normalized": True, "max_tokens": MAX_TOKENS,
            "text_format": "{title} > {heading}: {text}", "quantization": LAYOUT,
        },
        "sources": [
            {"id": s.id, "kind": s.kind, "title": s.title, "description": s.description,
             "url": s.url, "authority": s.authority, "path": s.path, "lang": lang}
            for s, lang in zip(sources, languages, strict=True)
        ],
        "passages": [
            {"id": p.id, "source": p.source_id, "heading": p.heading, "text": p.text, "url": p.url}
            for p in passages
        ],
        "lexical": {"tokenizer": TOKENIZER_VERSION, "stopwords": list(STOPWORDS),
                    "k1": K1, "b": B},
        "retrieval": options.retrieval,
        "vectors": {"file": "", "sha256": "", "count": len(passages), "dimension": DIMENSION,
                    "layout": LAYOUT},
        "gate": gate,
        "prompt": {"system": prompt.system, "refusal": prompt.refusal,
                   "no_model": prompt.no_model, "examples": prompt.examples,
                   "budgets": options.budgets},
    }
