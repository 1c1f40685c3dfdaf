"""The ``site-knowledge`` section of ``mkdocs.yml``: one typed schema for the plugin and compile.

The MkDocs plugin receives these options from MkDocs; ``site-knowledge compile`` reads the same
section itself (Zensical never imports MkDocs plugins) and validates it with the same schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mkdocs.config import base
from mkdocs.config import config_options as c

from site_knowledge.browser.assets import ENGINES, BrowserOptions, wllama_parts
from site_knowledge.budgets import FIELD_HELP, READERS, BudgetError, checked_overrides
from site_knowledge.compiler.assemble import SiteSettings
from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.shards import MANIFEST_NAME, ShardSizes
from site_knowledge.plugin.gateways import GatewayList
from site_knowledge.retrieval.artifact import ARTIFACT_NAME

PLUGIN_NAME = "site-knowledge"
MIN_CHUNK, MAX_CHUNK = 200, 900
LAYOUTS = ("auto", "single", "sharded")
MB = 1048576
"""Bytes in a megabyte as the options count them (MiB, as the build's summary line does)."""
SHARD_ABOVE_MB = 8
VECTORS_WHOLE_MB = ShardSizes().whole_rows_bytes // MB


class _Bounded(c.Type[int]):
    """An integer from ``low`` to ``high`` (no upper bound when None)."""

    def __init__(self, low: int, high: int | None = None, unit: str = "", **kwargs: Any) -> None:
        super().__init__(int, **kwargs)
        self.low, self.high, self.unit = low, high, unit

    def run_validation(self, value: object) -> int:
        number = super().run_validation(value)
        if self.high is not None and not self.low <= number <= self.high:
            raise base.ValidationError(f"must be between {self.low} and {self.high}, not {number}")
        if number < self.low:
            raise base.ValidationError(f"must be {self.low} or more {self.unit}, not {number}")
        return number


class _WllamaModel(c.Type[str]):
    """A name that resolves to a vendored GGUF, whole or in parts (``wllama_parts``)."""

    def run_validation(self, value: object) -> str:
        name = super().run_validation(value)
        try:
            wllama_parts(name)
        except ValueError as error:
            raise base.ValidationError(str(error)) from None
        return name


class _Budgets(base.BaseConfigOption[dict[str, dict[str, int]]]):
    """Per-reader overrides of the context budgets, checked key by key
    (:func:`site_knowledge.budgets.checked_overrides`); an error names the full key path."""

    def __init__(self) -> None:
        super().__init__()
        self.default: dict[str, dict[str, int]] = {}
        self._key_name = "budgets"

    def pre_validation(self, config: base.Config, key_name: str) -> None:
        self._key_name = key_name

    def run_validation(self, value: object) -> dict[str, dict[str, int]]:
        try:
            return checked_overrides(value)
        except BudgetError as error:
            where = f"{self._key_name}.{error.path}: " if error.path else ""
            raise base.ValidationError(f"{where}{error.message}") from None


class SiteKnowledgeOptions(base.Config):
    """The options, one a line; :data:`OPTION_HELP` describes each one.

    :func:`option_reference` lists every option's name, type, default and description in
    schema order, for a generated configuration reference; ``budgets``' fields are described
    by :data:`site_knowledge.budgets.FIELD_HELP`, with each reader's defaults in
    :data:`site_knowledge.budgets.READERS`. ``docs/configuration.md`` is rendered from them at
    build time (``docs/hooks.py``).
    """

    enabled = c.Type(bool, default=True)
    ontology = c.Optional(c.File(exists=True))
    chunk_size = _Bounded(MIN_CHUNK, MAX_CHUNK, default=MAX_CHUNK)
    cache_dir = c.Optional(c.Type(str))
    output_dir = c.Type(str, default="assets/site-knowledge")
    gateways = GatewayList()
    engines = c.ListOfItems(c.Choice(ENGINES), default=list(ENGINES))
    budgets = _Budgets()
    chat = c.Type(bool, default=True)
    webllm_url = c.Optional(c.Type(str))
    wllama_model = c.Optional(_WllamaModel(str))
    cdn = c.Type(bool, default=False)
    artifact = c.Choice(LAYOUTS, default="auto")
    shard_above = c.Type(int, default=SHARD_ABOVE_MB)
    vectors_whole_up_to = _Bounded(0, unit="megabytes", default=VECTORS_WHOLE_MB)


OPTION_HELP: dict[str, tuple[str, str]] = {
    "enabled": ("bool", "Turn the plugin off without removing it."),
    "ontology": ("path", "A Python file of structured facts, relative to mkdocs.yml; "
                         "none: pages only."),
    "chunk_size": ("int", f"Maximum passage length in characters ({MIN_CHUNK}-{MAX_CHUNK})."),
    "cache_dir": ("path", "The embedding cache, relative to mkdocs.yml; none: "
                          "$SITE_KNOWLEDGE_CACHE, else ~/.cache/site-knowledge."),
    "output_dir": ("str", "Where the artifact and the chat box's files go in the built site."),
    "gateways": ("list of URLs", "Gateway base URLs, tried in order by the chat box: a list, or "
                                 "one comma-separated string (so !ENV can set it)."),
    "engines": ("list", f"The chat box's engines, in order, from {', '.join(ENGINES)}; one left "
                        "out leaves its files out of the built site."),
    "budgets": ("mapping", f"Overrides of the context budgets per reader ({', '.join(READERS)}) "
                           f"and field ({', '.join(FIELD_HELP)}), e.g. "
                           "{browser: {evidence_chars: 900}}; an unknown key or a bad value "
                           "fails the build, naming the key."),
    "chat": ("bool", "Inject the chat box and copy its assets (off: artifact only)."),
    "webllm_url": ("URL", "Base URL of self-hosted MLC weights for WebLLM; none: WebLLM is "
                          "skipped unless cdn."),
    "wllama_model": ("str", "The CPU engine's GGUF under vendor/models/: a file, a split model's "
                            "parts by their common name, or a name's unique start; none: the "
                            "vendored SmolLM2-135M Q8_0."),
    "cdn": ("bool", "Opt in to WebLLM's prebuilt models from their public hosts."),
    "artifact": ("str", "The artifact's layout for the chat box: single (one file the box "
                        "loads whole), sharded (a manifest and shards the box fetches per "
                        "question; docs/sharded.md), or auto: sharded when the pages' rendered "
                        "HTML exceeds shard_above."),
    "shard_above": ("int", "Megabytes of rendered page HTML above which artifact: auto shards."),
    "vectors_whole_up_to": ("int", "Sharded only: megabytes of vectors up to which the box "
                                   "reads them whole on opening (the single file's exact "
                                   "ranking); above, it fetches the k-means partitions nearest "
                                   "each question (fewer bytes, an approximate ranking; "
                                   "docs/sharded.md)."),
}
"""Each option's type (as written in mkdocs.yml) and description."""


@dataclass(frozen=True)
class OptionDoc:
    """One option as a configuration reference shows it."""

    name: str
    type: str
    default: object
    """The schema's default (None: unset, the description says what applies then)."""
    description: str


def option_reference() -> list[OptionDoc]:
    """Every option of :class:`SiteKnowledgeOptions` with its type, default and description."""
    docs = []
    for name, option in SiteKnowledgeOptions._schema:
        kind, description = OPTION_HELP[name]
        docs.append(OptionDoc(name, kind, option.default, description))
    return docs


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
        where = str(error) if str(error).startswith(f"{key}.") else f"{key}: {error}"
        raise BuildError(str(config_file), f"plugins.{PLUGIN_NAME}.{where}")
    return options


def browser_options(options: SiteKnowledgeOptions, sharded: bool = False) -> BrowserOptions:
    """The chat box's options from the validated section (``sharded``: it loads the manifest)."""
    return BrowserOptions(gateways=list(options.gateways), engines=list(options.engines),
                          webllm_url=options.webllm_url, wllama_model=options.wllama_model,
                          cdn=options.cdn,
                          artifact=MANIFEST_NAME if sharded else ARTIFACT_NAME)


def sharded_layout(options: SiteKnowledgeOptions, html_bytes: int) -> bool:
    """Whether the site gets the sharded artifact: as configured, or for ``auto`` when the
    pages' rendered HTML (``html_bytes``) exceeds ``shard_above`` megabytes."""
    if options.artifact == "auto":
        return html_bytes > options.shard_above * MB
    return bool(options.artifact == "sharded")


def site_settings(options: SiteKnowledgeOptions, site_name: str, site_url: str | None,
                  site_dir: Path, language: str = "") -> SiteSettings:
    """The compiler's settings for a site built into ``site_dir`` (``language``: the theme's)."""
    return SiteSettings(
        site_name=site_name, site_url=site_url or "", output_dir=site_dir / options.output_dir,
        ontology=Path(options.ontology) if options.ontology else None,
        chunk_size=options.chunk_size, budgets=options.budgets, language=language,
        shard_sizes=ShardSizes(whole_rows_bytes=options.vectors_whole_up_to * MB),
    )
