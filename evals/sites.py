"""The sites the retrieval eval, the lab scripts and the benchmarks measure, built with the plugin
from the repository.

The example site (``examples/homepage/mkdocs.yml``) and the four real corpora under
``tests/corpora/``. A corpus is built from its own ``mkdocs.yml`` in place (MkDocs only reads
the docs folder), with ``site-knowledge`` appended to its plugins and the output written
elsewhere, so the corpus folders are never edited.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "homepage"
CORPORA = REPO / "tests" / "corpora"


@dataclass(frozen=True)
class Site:
    """A buildable site: its name and its MkDocs configuration file."""

    name: str
    config_file: Path


SITES: dict[str, Site] = {
    "example": Site("example", EXAMPLE / "mkdocs.yml"),
    "netbox": Site("netbox", CORPORA / "netbox-docs" / "mkdocs.yml"),
    "evaluationcontext-blog": Site(
        "evaluationcontext-blog", CORPORA / "evaluationcontext-blog" / "mkdocs.yml"
    ),
    "drf-docs": Site("drf-docs", CORPORA / "drf-docs" / "mkdocs.yml"),
    "fastapi-docs": Site("fastapi-docs", CORPORA / "fastapi-docs" / "mkdocs.yml"),
}




def read_config(config_file: Path) -> dict[str, Any]:
    """A ``mkdocs.yml`` read as MkDocs reads it (``!ENV`` resolved, ``!relative`` kept as
    placeholders for ``dump_config``), not validated."""
    import yaml
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.utils.yaml import get_yaml_loader

    loader = get_yaml_loader(config=MkDocsConfig(config_file_path=str(config_file)))
    with config_file.open("rb") as handle:
        loaded: dict[str, Any] = yaml.load(handle, Loader=loader) or {}
    return loaded


def dump_config(config: dict[str, Any]) -> str:
    """A ``mkdocs.yml`` loaded with MkDocs' loader, as YAML again: its ``!relative`` tags are
    written back as tags, so a copy of the site resolves them against its own folder."""
    import yaml
    from mkdocs.utils.yaml import ConfigDirPlaceholder, DocsDirPlaceholder, RelativeDirPlaceholder

    class Dumper(yaml.SafeDumper):
        pass

    def relative(prefix: str) -> Any:
        def represent(dumper: yaml.SafeDumper, placeholder: Any) -> yaml.Node:
            path = f"{prefix}/{placeholder.suffix}" if placeholder.suffix else prefix
            return dumper.represent_scalar("!relative", path)
        return represent

    Dumper.add_representer(ConfigDirPlaceholder, relative("$config_dir"))
    Dumper.add_representer(DocsDirPlaceholder, relative("$docs_dir"))
    Dumper.add_representer(RelativeDirPlaceholder, relative(""))
    return yaml.dump(config, Dumper=Dumper, sort_keys=False, allow_unicode=True)


def plugins_with_site_knowledge(config_file: Path, options: dict[str, Any]) -> list[Any]:
    """The site's own plugins with ``site-knowledge`` last, its own options updated by ``options``."""
    raw = read_config(config_file)
    plugins = raw.get("plugins", ["search"])
    if isinstance(plugins, dict):
        plugins = [{name: value} if value else name for name, value in plugins.items()]
    own: dict[str, Any] = {}
    kept: list[Any] = []
    for plugin in plugins:
        if plugin == "site-knowledge":
            continue
        if isinstance(plugin, dict) and "site-knowledge" in plugin:
            own = dict(plugin["site-knowledge"] or {})
            continue
        kept.append(plugin)
    merged = {**own, **options}
    return [*kept, {"site-knowledge": merged} if merged else "site-knowledge"]


def build(site: Site, site_dir: Path, **options: Any) -> Path:
    """Run a real ``mkdocs build`` of ``site`` into ``site_dir`` with the plugin.

    Args:
        site: One of `SITES`.
        site_dir: Where the built site goes (created).
        **options: ``site-knowledge`` plugin options (``chat=False`` skips the browser assets).

    Returns:
        The built site folder.
    """
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    plugins = plugins_with_site_knowledge(site.config_file, options)
    overrides: dict[str, Any] = {"site_dir": str(site_dir), "plugins": plugins}
    config = load_config(str(site.config_file), **overrides)
    theme = config.theme
    if theme.name == "material":
        theme["font"] = False
    mkdocs_build(config)
    return site_dir


def build_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--sites DIR`` (build the sites there and keep them) and ``--reuse`` (use the
    sites already built there) to a lab script's command line."""
    parser.add_argument("--sites", type=Path, help="build the sites here (kept; default: temporary)")
    parser.add_argument("--reuse", action="store_true", help="use the sites already built in --sites")


def parse_build_arguments(parser: argparse.ArgumentParser, argv: Any = None) -> argparse.Namespace:
    """Parse the command line; ``--reuse`` without ``--sites`` is an error."""
    args = parser.parse_args(argv)
    if args.reuse and not args.sites:
        parser.error("--reuse needs --sites")
    return args
