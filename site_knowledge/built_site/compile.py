"""``site-knowledge compile``: the artifact and the chat box for a site another tool built.

Reads the built pages, keeps those the plugin would keep, hands their main content to the same
compiler through the same assembly (``compiler/assemble.py``), then copies the chat box's files
and injects its launcher with the plugin's injector. Nothing is written when an input is bad.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from site_knowledge.built_site.config import SiteConfig, load_site_config
from site_knowledge.built_site.content import (
    THEMES,
    ContentRule,
    main_content,
    rendered_title,
)
from site_knowledge.built_site.sources import SiteSources, SourcePage, site_sources
from site_knowledge.compiler.assemble import compile_site, embedding_cache_dir
from site_knowledge.compiler.compiler import BuildReport, PageInput
from site_knowledge.compiler.embed_cache import EmbeddingCache
from site_knowledge.compiler.model import BuildError
from site_knowledge.embedding import Encoder
from site_knowledge.plugin.gateways import loopback_warnings
from site_knowledge.plugin.options import browser_options, sharded_layout, site_settings
from site_knowledge.plugin.pages import page_input, page_opt_out, theme_language

# Pages a theme renders from its static_templates (search.html: the search plugin adds it),
# which the plugin never sees, so they never get the box.
THEME_PAGES = frozenset({"404.html", "search.html"})


@dataclass
class CompileResult:
    """What one run did, for the summary and for tests."""

    report: BuildReport
    asset_bytes: int = 0
    with_launcher: int = 0
    rewritten: int = 0
    warnings: list[str] = field(default_factory=list)


def built_pages(site_dir: Path) -> dict[str, Path]:
    """Every HTML file of a built site by its site-relative path.

    Raises:
        BuildError: the folder is missing or holds no HTML page.
    """
    if not site_dir.is_dir():
        raise BuildError(str(site_dir), "no such folder: give the built site (e.g. site/)")
    pages = {path.relative_to(site_dir).as_posix(): path for path in sorted(site_dir.rglob("*.html"))}
    if not pages:
        raise BuildError(str(site_dir), "no HTML pages: not a built site (run `zensical build` "
                                        "or `mkdocs build` first, and give its output folder)")
    return pages


def _read(path: Path, site_dir: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise BuildError(str(path.relative_to(site_dir)), f"not UTF-8 (byte {error.start})") from None


def _page_inputs(sources: SiteSources, pages: dict[str, Path], site_dir: Path,
                 rule: ContentRule) -> tuple[list[PageInput], list[str]]:
    """Each published page's main content, as the plugin would record it; and what is missing."""
    inputs, missing = [], []
    for source in sources.pages:
        if source.excluded or source.role == "listing" or page_opt_out(source.meta, "index"):
            continue
        path = pages.get(source.built_path)
        if path is None:
            missing.append(f"{source.src_uri}: no built page at {source.built_path}; left out")
            continue
        content = main_content(_read(path, site_dir), rule)
        if content is None:
            wanted = ", ".join(s.text for s in rule.selectors)
            raise BuildError(source.built_path, f"no main content: nothing matches {wanted} "
                                                "(set --content-selector for this theme)")
        inputs.append(page_input(source.src_uri, source.url, source.title(rendered_title(content)),
                                 source.meta, content))
    if missing and not inputs:
        raise BuildError(str(site_dir), f"none of its {len(pages)} HTML pages is built from "
                                        "the config's docs_dir: is it this site's build?")
    return inputs, missing


def _launcher_pages(sources: SiteSources, pages: dict[str, Path]) -> Iterator[tuple[str, Path, bool]]:
    """``(site path, file, keeps the box)`` for every page the plugin would inject into."""
    by_path: dict[str, SourcePage] = {source.built_path: source for source in sources.pages}
    for rel, path in pages.items():
        source = by_path.get(rel)
        if rel in sources.static_html or (source is None and rel in THEME_PAGES):
            continue
        yield rel, path, source is None or not page_opt_out(source.meta, "chat")


def _install_chat_box(config: SiteConfig, sources: SiteSources, pages: dict[str, Path],
                      site_dir: Path, result: CompileResult, sharded: bool) -> None:
    from site_knowledge.browser.assets import (
        inject_launcher,
        install_browser_assets,
        strip_launcher,
    )

    options = config.options
    chat = browser_options(options, sharded)
    result.asset_bytes = install_browser_assets(site_dir, options.output_dir, chat)
    for rel, path, keep in _launcher_pages(sources, pages):
        before = _read(path, site_dir)
        after = inject_launcher(before, rel, options.output_dir, chat) if keep else strip_launcher(before)
        result.with_launcher += keep
        if after != before:
            path.write_text(after, encoding="utf-8")
            result.rewritten += 1


def compile_built_site(site_dir: Path, config_file: Path, rule: ContentRule = THEMES,
                       cache: EmbeddingCache | None = None) -> CompileResult | None:
    """Compile the artifact of a built site and give its pages the chat box.

    Args:
        site_dir: the built site (``zensical build``'s or ``mkdocs build``'s output).
        config_file: the site's ``mkdocs.yml``.
        rule: where each page's main content is, and what in it the theme added.
        cache: an embedding cache to reuse (default: the one the config names).

    Returns:
        What was done, or None when the config turns site-knowledge off (``enabled: false``).

    Raises:
        BuildError: a folder that is not a built site, a bad config, source or page; the site
            is left as it was.
    """
    pages = built_pages(site_dir)
    config = load_site_config(config_file, site_dir)
    options = config.options
    if not options.enabled:
        return None
    ours = options.output_dir.strip("/") + "/"
    pages = {rel: path for rel, path in pages.items() if not rel.startswith(ours)}
    sources = site_sources(config, datetime.now(UTC))
    inputs, missing = _page_inputs(sources, pages, site_dir, rule)
    settings = site_settings(options, config.mkdocs.site_name, config.mkdocs.site_url, site_dir,
                             theme_language(config.mkdocs.theme))
    if cache is None:
        cache = EmbeddingCache(Encoder(), embedding_cache_dir(config_file.parent, options.cache_dir))
    warnings = [*loopback_warnings(config.mkdocs.site_url, options.gateways), *missing]
    sharded = sharded_layout(options, sum(len(page.html) for page in inputs))
    result = CompileResult(compile_site(inputs, settings, cache, sharded), warnings=warnings)
    if options.chat:
        _install_chat_box(config, sources, pages, site_dir, result, sharded)
    return result
