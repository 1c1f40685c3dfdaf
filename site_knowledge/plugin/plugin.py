"""The MkDocs adapter: collects published pages and hands them to the compiler.

Hooks:
    on_startup: keeps the encoder and embedding cache for the life of ``mkdocs serve``.
    on_config: resolves the ontology and cache paths against the config file.
    on_page_read_source: rejects non-UTF-8 pages and malformed front matter, naming the file
        (MkDocs would otherwise silently publish the front matter as text).
    on_page_content: records each published page's rendered HTML (drafts never).
    on_post_page: injects the chat box launcher unless the page opts out.
    on_post_build: compiles and writes the knowledge artifact and the browser assets.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.utils.meta import YAML_RE

from site_knowledge.build.compiler import (
    DEFAULT_BUDGETS,
    BuildOptions,
    BuildReport,
    PageInput,
    compile_knowledge,
)
from site_knowledge.build.embed_cache import EmbeddingCache
from site_knowledge.build.model import BuildError
from site_knowledge.embedding import Encoder, default_cache_dir
from site_knowledge.plugin.knowledge import browser_options, load_knowledge_inputs

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

log = logging.getLogger("mkdocs.plugins.site_knowledge")
OPT_OUT_KEY = "site_knowledge"


class _PluginConfig(base.Config):
    enabled = c.Type(bool, default=True)
    ontology = c.Optional(c.File(exists=True))
    chunk_size = c.Type(int, default=900)
    model = c.Choice(("all-MiniLM-L6-v2",), default="all-MiniLM-L6-v2")
    cache_dir = c.Optional(c.Type(str))
    output_dir = c.Type(str, default="assets/site-knowledge")
    gateways = c.ListOfItems(c.Type(str), default=[])
    engines = c.ListOfItems(c.Choice(("gateway", "webllm", "wllama", "search")),
                            default=["gateway", "webllm", "wllama", "search"])
    budgets = c.Type(dict, default={})
    chat = c.Type(bool, default=True)
    webllm_url = c.Optional(c.Type(str))
    wllama_model = c.Optional(c.Type(str))
    cdn = c.Type(bool, default=False)


def page_opt_out(meta: Mapping[str, Any], part: Literal["index", "chat"]) -> bool:
    """Front matter ``site_knowledge: false`` opts a page out of both; a mapping picks one."""
    setting = meta.get(OPT_OUT_KEY, True)
    if isinstance(setting, dict):
        return setting.get(part, True) is False
    return setting is False


def is_draft(page: Page) -> bool:
    """MkDocs ``draft_docs``/excluded files and Material blog ``draft: true`` posts."""
    return page.file.inclusion.is_excluded() or page.meta.get("draft") is True


def is_listing(page: Page) -> bool:
    """Material blog views (index, archive, category, pagination) only repeat post excerpts."""
    return any(cls.__name__ == "View" and cls.__module__.startswith("material.plugins.blog")
               for cls in type(page).__mro__)


class SiteKnowledgePlugin(BasePlugin[_PluginConfig]):
    """Builds ``site-knowledge.json`` from the published pages and the ontology."""

    def __init__(self) -> None:
        self._cache: EmbeddingCache | None = None
        self._pages: list[PageInput] = []
        self.last_report: BuildReport | None = None

    def on_startup(self, *, command: str, dirty: bool) -> None:
        """Defined so MkDocs keeps this instance, and its embedding cache, across serve rebuilds."""

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        """Check the chunk size and reset the page list for this build."""
        if not 200 <= self.config.chunk_size <= 900:
            raise PluginError("site-knowledge: chunk_size must be between 200 and 900")
        self._pages = []
        return config

    def _embedding_cache(self, config: MkDocsConfig) -> EmbeddingCache:
        configured = self.config.cache_dir
        base_dir = Path(config.config_file_path or ".").parent
        cache_dir = base_dir / configured if configured else default_cache_dir()
        if self._cache is None or self._cache.directory != cache_dir:
            self._cache = EmbeddingCache(Encoder(), cache_dir)
        return self._cache

    def on_page_read_source(self, /, *, page: Page, config: MkDocsConfig) -> str | None:
        """Fail clearly on bytes that are not UTF-8 and on front matter that is not YAML."""
        if not self.config.enabled or page.file.abs_src_path is None:
            return None
        where = page.file.src_uri
        raw = Path(page.file.abs_src_path).read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            line = raw[: error.start].count(b"\n") + 1
            raise PluginError(f"site-knowledge: {where}: not UTF-8 (byte {error.start}, "
                              f"line {line})") from None
        if match := YAML_RE.match(text):
            try:
                data = yaml.safe_load(match.group(1))
            except yaml.YAMLError as error:
                mark = getattr(error, "problem_mark", None)
                at = f" at line {mark.line + 2}" if mark is not None else ""
                problem = getattr(error, "problem", None) or "invalid YAML"
                raise PluginError(
                    f"site-knowledge: {where}: malformed front matter{at}: {problem}"
                ) from None
            if data is not None and not isinstance(data, dict):
                raise PluginError(f"site-knowledge: {where}: front matter is not a mapping")
        return None

    @event_priority(-75)
    def on_page_content(self, html: str, /, *, page: Page, config: MkDocsConfig,
                        files: Files) -> str | None:
        """Record the rendered HTML of each published page that has not opted out."""
        if (self.config.enabled and not is_draft(page) and not is_listing(page)
                and not page_opt_out(page.meta, "index")):
            self._pages.append(PageInput(
                src_path=page.file.src_uri, url=page.url, title=page.title or page.file.name,
                description=str(page.meta.get("description") or ""), html=html,
            ))
        return html

    def on_post_page(self, output: str, /, *, page: Page, config: MkDocsConfig) -> str | None:
        """Inject the chat launcher before ``</body>`` unless the page opts out."""
        if not (self.config.enabled and self.config.chat) or page_opt_out(page.meta, "chat"):
            return output
        from site_knowledge.browser.assets import launcher_tags

        depth = page.url.count("/")
        root = "../" * depth if depth else "./"
        tags = launcher_tags(root, self.config.output_dir, browser_options(self.config))
        head, marker, tail = output.rpartition("</body>")
        return f"{head}{tags}{marker}{tail}" if marker else output + tags

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        """Compile the artifact; a bad input stops the build and writes nothing."""
        if not self.config.enabled:
            return
        site_dir = Path(config.site_dir)
        output_dir = site_dir / self.config.output_dir
        budgets = {k: {**v, **self.config.budgets.get(k, {})} for k, v in DEFAULT_BUDGETS.items()}
        options = BuildOptions(site_name=config.site_name, site_url=config.site_url or "",
                               output_dir=output_dir, chunk_size=self.config.chunk_size,
                               budgets=budgets)
        try:
            sources, prompt = load_knowledge_inputs(self.config.ontology, config.site_name)
            report = compile_knowledge(self._pages, sources, prompt, options,
                                       self._embedding_cache(config))
        except BuildError as error:
            raise PluginError(f"site-knowledge: {error}") from None
        self.last_report = report
        asset_bytes = 0
        if self.config.chat:
            from site_knowledge.browser.assets import install_browser_assets

            asset_bytes = install_browser_assets(site_dir, self.config.output_dir,
                                                 browser_options(self.config))
        log.info(
            "site-knowledge: %d pages, %d passages, %s artifact + %s vectors, %s assets, "
            "%.1f s, %d embedded, %d cache hits",
            report.pages, report.passages, _size(report.artifact_bytes),
            _size(report.vectors_bytes), _size(asset_bytes), report.seconds,
            report.embedded, report.cache_hits,
        )


def _size(count: int) -> str:
    return f"{count / 1048576:.1f} MB" if count >= 1048576 else f"{count / 1024:.1f} KB"
