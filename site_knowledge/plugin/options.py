"""The ``site-knowledge`` section of ``mkdocs.yml``: one typed schema for the plugin and compile.

The MkDocs plugin receives these options from MkDocs; ``site-knowledge compile`` reads the same
section itself (Zensical never imports MkDocs plugins) and validates it with the same schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mkdocs.config import base
from mkdocs.config import config_options as c

from site_knowledge.compiler.assemble import SiteSettings
from site_knowledge.compiler.model import BuildError
from site_knowledge.plugin.gateways import GatewayList

if TYPE_CHECKING:
    from site_knowledge.browser.assets import BrowserOptions

PLUGIN_NAME = "site-knowledge"
MIN_CHUNK, MAX_CHUNK = 200, 900


class _ChunkSize(c.Type[int]):
    def run_validation(self, value: object) -> int:
        size = super().run_validation(value)
        if not MIN_CHUNK <= size <= MAX_CHUNK:
            raise base.ValidationError(f"must be between {MIN_CHUNK} and {MAX_CHUNK}, not {size}")
        return size


class _WllamaModel(c.Type[str]):
    """A name that resolves to a vendored GGUF, whole or in parts (``wllama_parts``)."""

    def run_validation(self, value: object) -> str:
        name = super().run_validation(value)
        from site_knowledge.browser.assets import wllama_parts

        try:
            wllama_parts(name)
        except ValueError as error:
            raise base.ValidationError(str(error)) from None
        return name


class SiteKnowledgeOptions(base.Config):
    """The options; the README's "Plugin options" table documents each one."""

    enabled = c.Type(bool, default=True)
    ontology = c.Optional(c.File(exists=True))
    chunk_size = _ChunkSize(int, default=MAX_CHUNK)
    cache_dir = c.Optional(c.Type(str))
    output_dir = c.Type(str, default="assets/site-knowledge")
    gateways = GatewayList()
    engines = c.ListOfItems(c.Choice(("gateway", "webllm", "wllama", "search")),
                            default=["gateway", "webllm", "wllama", "search"])
    budgets = c.Type(dict, default={})
    chat = c.Type(bool, default=True)
    webllm_url = c.Optional(c.Type(str))
    wllama_model = c.Optional(_WllamaModel(str))
    cdn = c.Type(bool, default=False)


def load_options(raw: Mapping[str, Any], config_file: Path) -> SiteKnowledgeOptions:
    """Validate a ``site-knowledge`` section read from ``config_file`` as MkDocs would.

    Raises:
        BuildError: naming the config file and the first bad option.
    """
    options = SiteKnowledgeOptions(config_file_path=str(config_file))
    options.load_dict(dict(raw))
    errors, _warnings = options.validate()
    if errors:
        key, error = errors[0]
        raise BuildError(str(config_file), f"plugins.{PLUGIN_NAME}.{key}: {error}")
    return options


def browser_options(options: SiteKnowledgeOptions) -> BrowserOptions:
    """The chat box's options from the validated section."""
    from site_knowledge.browser.assets import BrowserOptions

    return BrowserOptions(gateways=list(options.gateways), engines=list(options.engines),
                          webllm_url=options.webllm_url, wllama_model=options.wllama_model,
                          cdn=options.cdn)


def site_settings(options: SiteKnowledgeOptions, site_name: str, site_url: str | None,
                  site_dir: Path) -> SiteSettings:
    """The compiler's settings for a site built into ``site_dir``."""
    return SiteSettings(
        site_name=site_name, site_url=site_url or "", output_dir=site_dir / options.output_dir,
        ontology=Path(options.ontology) if options.ontology else None,
        chunk_size=options.chunk_size, budgets=options.budgets,
    )
