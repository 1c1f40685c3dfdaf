"""Real builds of the example site and the corpora, with the plugin or without it, for the tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig

from site_knowledge.compiler.compiler import BuildReport
from site_knowledge.retrieval.artifact import load_artifact

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "homepage"
CORPORA = REPO / "tests" / "corpora"
NETBOX = CORPORA / "netbox-docs"
OUTPUT = "assets/site-knowledge"


@dataclass
class BuiltSite:
    """A built site folder, its artifact and the plugin's report of that build."""

    site_dir: Path
    artifact: dict[str, Any]
    report: BuildReport

    @property
    def artifact_path(self) -> Path:
        return self.site_dir / OUTPUT / "site-knowledge.json"


def run_build(config: MkDocsConfig, serve: bool = False) -> None:
    """Build as the ``mkdocs build`` (or ``serve``) command does: every plugin told the command
    first, shut down after. MkDocs keeps a plugin with startup hooks alive across configs loaded
    in one process (Material's blog plugin among them), so a build that skipped the startup
    would inherit the last one's command: drafts rendered after a serve build."""
    config.plugins.on_startup(command="serve" if serve else "build", dirty=False)
    try:
        build(config, serve_url="http://127.0.0.1:8000/" if serve else None)
    finally:
        config.plugins.on_shutdown()


def build_site(config_file: Path, site_dir: Path, serve: bool = False,
               **plugin_options: Any) -> BuiltSite:
    """Run a real ``mkdocs build`` (as ``mkdocs serve`` does it, with ``serve``)."""
    config = load_config(str(config_file), site_dir=str(site_dir))
    plugin = config.plugins["site-knowledge"]
    for key, value in plugin_options.items():
        plugin.config[key] = value
    run_build(config, serve)
    artifact, _ = load_artifact(site_dir)
    return BuiltSite(site_dir, artifact, plugin.last_report)


def copy_example(target: Path) -> Path:
    """A writable copy of the example site (mkdocs.yml, docs/, ontology.py)."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(EXAMPLE / "docs", target / "docs")
    shutil.copy(EXAMPLE / "mkdocs.yml", target / "mkdocs.yml")
    shutil.copy(EXAMPLE / "ontology.py", target / "ontology.py")
    return target / "mkdocs.yml"


def copy_netbox(target: Path, **plugin_options: Any) -> Path:
    """A copy of netbox-docs with the plugin added to its mkdocs.yml."""
    shutil.copytree(NETBOX, target, dirs_exist_ok=True)
    for path in target.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    config_file = target / "mkdocs.yml"
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    config["plugins"].append({"site-knowledge": plugin_options} if plugin_options else "site-knowledge")
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return config_file


def without_plugin(config_file: Path) -> Path:
    """A sibling config that builds the same site with the plugin switched off (``enabled:
    false``), as MkDocs builds it for a site without site-knowledge."""
    text = config_file.read_text(encoding="utf-8")
    entry = "  - site-knowledge:\n"
    assert text.count(entry) == 1, f"{config_file} has no '{entry.strip()}' entry"
    plain = config_file.with_name("mkdocs-plain.yml")
    plain.write_text(text.replace(entry, entry + "      enabled: false\n"), encoding="utf-8")
    return plain


def plain_build(config_file: Path, site_dir: Path, serve: bool = False) -> Path:
    """A real ``mkdocs build`` (as ``mkdocs serve`` renders it, with ``serve``) into site_dir."""
    run_build(load_config(str(config_file), site_dir=str(site_dir)), serve)
    return site_dir


def zensical_build(config_file: Path) -> Path:
    """A real ``zensical build`` of config_file; returns its output folder (``site/`` beside it)."""
    done = subprocess.run(
        [sys.executable, "-m", "zensical", "build", "-f", config_file.name],
        cwd=config_file.parent, env={**os.environ, "NO_COLOR": "1"}, capture_output=True,
        text=True, timeout=600, check=False,
    )
    site = config_file.parent / "site"
    if done.returncode != 0 or not (site / "index.html").is_file():
        raise AssertionError(f"zensical build failed in {config_file.parent}:\n"
                             f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return site
