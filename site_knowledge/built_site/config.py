"""``mkdocs.yml`` read for a site that another tool built (Zensical, MkDocs without the plugin).

Only what maps built pages back to their sources is taken: ``site_name``, ``site_url``,
``docs_dir``, ``use_directory_urls``, ``nav``, ``exclude_docs``, ``draft_docs``,
``not_in_nav``, the blog plugins and the ``site-knowledge`` section. They are validated by
MkDocs' own config classes, so paths and patterns mean what they mean to ``mkdocs build``.
Python tags (``!!python/name:...``) are kept as written, never imported, unless a blog's URL
rule needs one (a custom ``post_slugify``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import ConfigurationError
from mkdocs.utils.yaml import get_yaml_loader, yaml_load

from site_knowledge.built_site.blog import BlogSettings, blog_settings
from site_knowledge.compiler.model import BuildError
from site_knowledge.plugin.options import PLUGIN_NAME, SiteKnowledgeOptions, load_options

STRUCTURE_KEYS = ("site_name", "site_url", "docs_dir", "use_directory_urls", "nav",
                  "exclude_docs", "draft_docs", "not_in_nav")
BLOG_PLUGINS = ("blog", "material/blog")
OFFLINE_PLUGINS = ("offline", "material/offline")


@dataclass(frozen=True)
class PythonTag:
    """A ``!!python/...`` value as written, e.g. ``name:pymdownx.slugs.slugify``."""

    tag: str
    value: Any

    def resolve(self) -> Any:
        """Import what the tag names (and call it for ``object/apply``), as MkDocs would."""
        kind, _, dotted = self.tag.partition(":")
        module, _, attribute = dotted.rpartition(".")
        target = getattr(importlib.import_module(module), attribute)
        if kind == "name":
            return target
        if kind == "object/apply":
            value = self.value if isinstance(self.value, dict) else {"args": self.value}
            return target(*value.get("args", []), **value.get("kwds", {}))
        raise ValueError(f"!!python/{self.tag} cannot be evaluated here")


@dataclass(frozen=True)
class SiteConfig:
    """What compile needs from ``mkdocs.yml``.

    Attributes:
        config_file: the file read.
        mkdocs: MkDocs' validated config, holding only :data:`STRUCTURE_KEYS` and ``site_dir``.
        options: the ``site-knowledge`` section (defaults when the section is absent).
        blogs: every enabled blog plugin instance.
    """

    config_file: Path
    mkdocs: MkDocsConfig
    options: SiteKnowledgeOptions
    blogs: tuple[BlogSettings, ...]


def _python_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> PythonTag:
    value: Any
    if isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_scalar(node)  # type: ignore[arg-type]
    return PythonTag(suffix, value)


def _local_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> str:
    return f"!{suffix}"


def _loader() -> Any:
    """MkDocs' loader (``!ENV``) on the safe base, with Python and local tags kept as data."""
    loader = get_yaml_loader(yaml.SafeLoader)
    loader.add_multi_constructor("tag:yaml.org,2002:python/", _python_tag)
    loader.add_multi_constructor("!", _local_tag)  # !relative and the like: not paths we read
    return loader


def read_yaml(config_file: Path) -> dict[str, Any]:
    """The config file as data, ``INHERIT`` and ``!ENV`` resolved as MkDocs resolves them."""
    if not config_file.is_file():
        raise BuildError(str(config_file), "no such config file (give the site's mkdocs.yml with -f)")
    if config_file.suffix not in (".yml", ".yaml"):
        raise BuildError(str(config_file), "compile reads mkdocs.yml (YAML); "
                                           "a zensical.toml is not supported yet")
    try:
        with config_file.open("rb") as stream:
            raw = yaml_load(stream, _loader())
    except ConfigurationError as error:
        raise BuildError(str(config_file), str(error)) from None
    if not isinstance(raw, dict):
        raise BuildError(str(config_file), "not a mapping of settings")
    return raw


def plugin_entries(plugins: Any, where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(name, options)`` for each entry of ``plugins``, in either of MkDocs' two forms."""
    items: list[Any]
    if plugins is None:
        return
    if isinstance(plugins, dict):
        items = [{name: value} for name, value in plugins.items()]
    elif isinstance(plugins, list):
        items = plugins
    else:
        raise BuildError(where, "plugins must be a list or a mapping")
    for item in items:
        if isinstance(item, str):
            yield item, {}
        elif isinstance(item, dict) and len(item) == 1:
            name, value = next(iter(item.items()))
            if value is not None and not isinstance(value, dict):
                raise BuildError(where, f"plugins.{name}: options must be a mapping")
            yield str(name), value or {}
        else:
            raise BuildError(where, f"plugins: unreadable entry {item!r}")


def load_site_config(config_file: Path, site_dir: Path) -> SiteConfig:
    """Read and validate ``config_file`` for the site built into ``site_dir``.

    Raises:
        BuildError: naming the config file and the setting that is wrong.
    """
    raw = read_yaml(config_file)
    where = str(config_file)
    entries = list(plugin_entries(raw.get("plugins"), where))
    structure = {key: raw[key] for key in STRUCTURE_KEYS if key in raw}
    if any(name in OFFLINE_PLUGINS and options.get("enabled", True) for name, options in entries):
        structure["use_directory_urls"] = False  # what Material's and Zensical's offline plugin do
    config = MkDocsConfig(config_file_path=str(config_file))
    config.load_dict({**structure, "site_dir": str(site_dir)})
    errors, _warnings = config.validate()
    if errors:
        key, error = errors[0]
        raise BuildError(where, f"{key}: {error}")
    knowledge: Mapping[str, Any] = {}
    blogs = []
    for name, options in entries:
        if name == PLUGIN_NAME:
            knowledge = options
        elif name in BLOG_PLUGINS and options.get("enabled", True) is not False:
            blogs.append(blog_settings(options, where, _resolve_tag))
    return SiteConfig(config_file, config, load_options(knowledge, config_file), tuple(blogs))


def _resolve_tag(value: object) -> Callable[..., Any] | object:
    return value.resolve() if isinstance(value, PythonTag) else value
