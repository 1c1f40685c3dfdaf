"""The MkDocs adapter: collects published pages and hands them to the compiler.

Hooks:
    on_startup: keeps the encoder and embedding cache for the life of ``mkdocs serve``.
    on_config: starts a fresh page list for this build; warns when a public site names a
        loopback gateway.
    on_page_read_source: rejects non-UTF-8 pages and malformed front matter, naming the file
        (MkDocs would otherwise silently publish the front matter as text).
    on_page_content: records each published page's rendered HTML (drafts never) and, on a
        cold cache, hands it to a background embedder while MkDocs renders the rest.
    on_post_page: injects the chat box launcher unless the page opts out.
    on_post_build: compiles and writes the knowledge artifact and the browser assets.
    on_build_error: stops the background embedder of a failed build.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority

from site_knowledge.compiler.assemble import compile_site, embedding_cache_dir, summary
from site_knowledge.compiler.compiler import BuildReport, PageInput
from site_knowledge.compiler.embed_cache import EmbeddingCache
from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.prefetch import EmbeddingPrefetch
from site_knowledge.embedding import Encoder
from site_knowledge.plugin.gateways import loopback_warnings
from site_knowledge.plugin.options import (
    SiteKnowledgeOptions,
    browser_options,
    sharded_layout,
    site_settings,
)
from site_knowledge.plugin.pages import (
    check_page_source,
    is_draft,
    page_input,
    page_opt_out,
    theme_language,
)

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

log = logging.getLogger("mkdocs.plugins.site_knowledge")


def is_excluded(page: Page) -> bool:
    """MkDocs ``draft_docs``/excluded files (Material marks its blog's drafts so) and
    front matter ``draft: true``."""
    return page.file.inclusion.is_excluded() or is_draft(page.meta)


def is_listing(page: Page) -> bool:
    """Material blog views (index, archive, category, pagination) only repeat post excerpts."""
    return any(cls.__name__ == "View" and cls.__module__.startswith("material.plugins.blog")
               for cls in type(page).__mro__)


class SiteKnowledgePlugin(BasePlugin[SiteKnowledgeOptions]):
    """Builds ``site-knowledge.json`` from the published pages and the ontology."""

    def __init__(self) -> None:
        self._cache: EmbeddingCache | None = None
        self._pages: list[PageInput] = []
        self._prefetch: EmbeddingPrefetch | None = None
        self.last_report: BuildReport | None = None
        self._sharded: bool | None = None

    def on_startup(self, *, command: str, dirty: bool) -> None:
        """Defined so MkDocs keeps this instance, and its embedding cache, across serve rebuilds."""

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        """Reset the page list for this build; warn about a loopback gateway on a public site."""
        for warning in loopback_warnings(config.site_url, self.config.gateways):
            log.warning("site-knowledge: %s", warning)
        self._pages = []
        self._sharded = None
        self._stop_prefetch()
        if self.config.enabled:
            self._prefetch = EmbeddingPrefetch.start_if_cold(self._embedding_cache(config),
                                                              self.config.chunk_size)
        return config

    def _stop_prefetch(self) -> None:
        if self._prefetch is not None:
            self._prefetch.finish()
            self._prefetch = None

    def on_build_error(self, *, error: Exception) -> None:
        """Stop the background embedder of a build that failed."""
        self._stop_prefetch()

    def _embedding_cache(self, config: MkDocsConfig) -> EmbeddingCache:
        cache_dir = embedding_cache_dir(Path(config.config_file_path or ".").parent,
                                        self.config.cache_dir)
        if self._cache is None or self._cache.directory != cache_dir:
            self._cache = EmbeddingCache(Encoder(), cache_dir)
        return self._cache

    def on_page_read_source(self, /, *, page: Page, config: MkDocsConfig) -> str | None:
        """Fail clearly on bytes that are not UTF-8 and on front matter that is not YAML."""
        if not self.config.enabled or page.file.abs_src_path is None:
            return None
        try:
            check_page_source(Path(page.file.abs_src_path).read_bytes(), page.file.src_uri)
        except BuildError as error:
            raise PluginError(f"site-knowledge: {error}") from None
        return None

    @event_priority(-75)
    def on_page_content(self, html: str, /, *, page: Page, config: MkDocsConfig,
                        files: Files) -> str | None:
        """Record the rendered HTML of each published page that has not opted out."""
        if (self.config.enabled and not is_excluded(page) and not is_listing(page)
                and not page_opt_out(page.meta, "index")):
            self._pages.append(page_input(page.file.src_uri, page.url,
                                          page.title or page.file.name, page.meta, html))
            if self._prefetch is not None:
                self._prefetch.submit(self._pages[-1])
        return html

    def on_post_page(self, output: str, /, *, page: Page, config: MkDocsConfig) -> str | None:
        """Inject the chat launcher before ``</body>`` unless the page opts out."""
        if not (self.config.enabled and self.config.chat) or page_opt_out(page.meta, "chat"):
            return output
        from site_knowledge.browser.assets import inject_launcher

        return inject_launcher(output, page.url, self.config.output_dir,
                               browser_options(self.config, self._layout_sharded()))

    def _layout_sharded(self) -> bool:
        """The artifact's layout, decided once per build: MkDocs renders every page (so
        ``_pages`` is whole) before it writes the first."""
        if self._sharded is None:
            self._sharded = sharded_layout(self.config, sum(len(p.html) for p in self._pages))
        return self._sharded

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        """Compile the artifact; a bad input stops the build and writes nothing."""
        if not self.config.enabled:
            return
        self._stop_prefetch()
        site_dir = Path(config.site_dir)
        settings = site_settings(self.config, config.site_name, config.site_url, site_dir,
                                 theme_language(config.theme))
        try:
            report = compile_site(self._pages, settings, self._embedding_cache(config),
                                  self._layout_sharded())
        except BuildError as error:
            raise PluginError(f"site-knowledge: {error}") from None
        self.last_report = report
        asset_bytes = 0
        if self.config.chat:
            from site_knowledge.browser.assets import install_browser_assets

            asset_bytes = install_browser_assets(site_dir, self.config.output_dir,
                                                 browser_options(self.config,
                                                                 self._layout_sharded()))
        log.info(summary(report, asset_bytes))
