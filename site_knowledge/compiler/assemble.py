"""A site's settings to the compiler's inputs (ontology sources, derived facts, prompt, budgets).

Every generator adapter (the MkDocs plugin, ``site-knowledge compile``) collects pages and
settings, then calls :func:`compile_site`; none assembles the compiler's inputs itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from site_knowledge.budgets import merged_budgets
from site_knowledge.compiler.compiler import (
    BuildOptions,
    BuildReport,
    PageInput,
    PromptParts,
    compile_knowledge,
)
from site_knowledge.compiler.derived import derived_facts
from site_knowledge.compiler.embed_cache import EmbeddingCache
from site_knowledge.compiler.model import Source
from site_knowledge.compiler.ontology_check import load_ontology
from site_knowledge.compiler.ontology_entities import entity_sources
from site_knowledge.compiler.ontology_sources import ontology_sources
from site_knowledge.compiler.prompt import (
    no_model_text,
    refusal_text,
    render_examples,
    render_site_prompt,
    render_system_prompt,
)
from site_knowledge.compiler.shard_cache import ShardMemo
from site_knowledge.compiler.shards import ShardSizes, write_layout
from site_knowledge.embedding import default_cache_dir


@dataclass(frozen=True)
class SiteSettings:
    """What a site's configuration says about its knowledge artifact.

    Attributes:
        site_name: the site's name, used in the prompt and the refusal.
        site_url: the site's public URL ("" when unknown).
        output_dir: the folder in the built site that receives the artifact.
        ontology: a Python file of structured facts, or None for pages only.
        chunk_size: the passage limit in characters.
        budgets: overrides of :data:`site_knowledge.budgets.DEFAULT_BUDGETS`, per reader.
        language: the theme's language ("" when unknown).
        shard_sizes: how a sharded artifact is cut.
    """

    site_name: str
    site_url: str
    output_dir: Path
    ontology: Path | None = None
    chunk_size: int = 900
    budgets: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    language: str = ""
    shard_sizes: ShardSizes = field(default_factory=ShardSizes)


def load_knowledge_inputs(ontology: Path | None, site_name: str,
                          pages: Sequence[PageInput] = ()) -> tuple[list[Source], PromptParts]:
    """Ontology sources (plus derived facts for a person) and the prompt; a site without
    ontology gets the generic prompt and page sources only.

    Args:
        ontology: the ontology file, or None.
        site_name: the site's name as visitors see it.
        pages: the published pages, which the generic form's attributes cite.

    Raises:
        BuildError: a bad ontology, or an attribute citing a page not in ``pages``.
    """
    texts = (refusal_text(site_name), no_model_text())
    if ontology is None:
        return [], PromptParts(render_site_prompt(site_name), *texts,
                               render_examples(person=False))
    ont = load_ontology(ontology)
    sources = [*ontology_sources(ont), *entity_sources(ont, pages)]
    if ont.profile is None:
        return sources, PromptParts(render_site_prompt(site_name, ont), *texts,
                                    render_examples(person=False))
    sources.append(derived_facts(ont, date.today()))
    return sources, PromptParts(render_system_prompt(ont, site_name), *texts,
                                render_examples(person=True))


def embedding_cache_dir(config_dir: Path, configured: str | None) -> Path:
    """The configured cache folder (relative to the site's config file), else the default."""
    return config_dir / configured if configured else default_cache_dir()


def compile_site(pages: Sequence[PageInput], settings: SiteSettings, cache: EmbeddingCache,
                 sharded: bool = False) -> BuildReport:
    """Assemble the inputs for ``settings``, compile ``pages`` into the artifact and lay it
    out: its shards beside it when ``sharded`` (copied from the shards memo when an earlier
    build cut them for the same artifact), none otherwise.

    Raises:
        BuildError: a bad ontology or page, naming the file; nothing is written then.
    """
    sources, prompt = load_knowledge_inputs(settings.ontology, settings.site_name, pages)
    options = BuildOptions(site_name=settings.site_name, site_url=settings.site_url,
                           output_dir=settings.output_dir, chunk_size=settings.chunk_size,
                           budgets=merged_budgets(settings.budgets), language=settings.language)
    report = compile_knowledge(pages, sources, prompt, options, cache)
    write_layout(report.artifact_path, sharded, settings.shard_sizes,
                 memo=ShardMemo(cache.directory, report.memo_key, report.built_at))
    return report


def summary(report: BuildReport, asset_bytes: int) -> str:
    """The one line a build prints about the artifact it wrote and what the chat box's files
    (``asset_bytes``, 0 without the box) add to the site."""
    box = f"chat box adds {_size(asset_bytes)}" if asset_bytes else "no chat box"
    return (
        f"site-knowledge: {report.pages} pages, {report.passages} passages, "
        f"{_size(report.artifact_bytes)} artifact + {_size(report.vectors_bytes)} vectors + "
        f"{_size(report.elsewhere_bytes)} gate reference, "
        f"{box}, {report.seconds:.1f} s, {report.embedded} embedded, "
        f"{report.cache_hits} cache hits"
    )


def _size(count: int) -> str:
    return f"{count / 1048576:.1f} MB" if count >= 1048576 else f"{count / 1024:.1f} KB"
