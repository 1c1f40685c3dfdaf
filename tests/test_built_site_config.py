"""mkdocs.yml read for compile: MkDocs' own validation, Python tags kept, plugins in either form."""

from __future__ import annotations

from pathlib import Path

import pytest
from sites import CORPORA, EXAMPLE, REPO

from site_knowledge.built_site.config import PythonTag, load_site_config, read_yaml
from site_knowledge.compiler.model import BuildError


def write(folder: Path, text: str, name: str = "mkdocs.yml") -> Path:
    (folder / "docs").mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def test_example_site(monkeypatch) -> None:
    monkeypatch.setenv("SITE_KNOWLEDGE_GATEWAY", "https://ask.example.org")
    config = load_site_config(EXAMPLE / "mkdocs.yml", REPO / "site")
    assert config.mkdocs.site_name == "Teo Varga"
    assert Path(config.mkdocs.docs_dir) == EXAMPLE / "docs"
    assert config.mkdocs.use_directory_urls is True
    assert config.options.gateways == ["https://ask.example.org"]
    assert Path(config.options.ontology) == EXAMPLE / "ontology.py"
    (blog,) = config.blogs
    assert (blog.blog_dir, blog.post_url_format) == ("blog", "{date}/{slug}")


def test_python_tags_are_kept_not_imported() -> None:
    raw = read_yaml(CORPORA / "drf-docs" / "mkdocs.yml")
    emoji = next(e for e in raw["markdown_extensions"] if isinstance(e, dict) and "pymdownx.emoji" in e)
    index = emoji["pymdownx.emoji"]["emoji_index"]
    assert index == PythonTag("name:material.extensions.emoji.twemoji", "")


def test_inherit_offline_plugin_and_plugins_as_a_mapping(tmp_path) -> None:
    write(tmp_path, "site_name: Base\nuse_directory_urls: true\n", "base.yml")
    config_file = write(tmp_path, "INHERIT: base.yml\nplugins:\n  offline: {}\n"
                                  "  site-knowledge: {chat: false}\n  blog: {enabled: false}\n")
    config = load_site_config(config_file, tmp_path / "site")
    assert config.mkdocs.site_name == "Base"
    assert config.mkdocs.use_directory_urls is False, "the offline plugin turns directory URLs off"
    assert config.options.chat is False
    assert config.blogs == ()


@pytest.mark.parametrize(("text", "message"), [
    ("site_name: [unclosed\n", r"mkdocs\.yml: .*error parsing the configuration file"),
    ("- a list\n", r"mkdocs\.yml: not a mapping of settings"),
    ("site_name: S\ndocs_dir: nowhere\n", r"mkdocs\.yml: docs_dir: .*nowhere"),
    ("use_directory_urls: true\n", r"mkdocs\.yml: site_name: Required configuration not provided"),
    ("site_name: S\nplugins: 3\n", r"mkdocs\.yml: plugins must be a list or a mapping"),
    ("site_name: S\nplugins:\n  - site-knowledge:\n      chunk_size: 5000\n",
     r"plugins\.site-knowledge\.chunk_size: must be between 200 and 900"),
    ("site_name: S\nplugins:\n  - blog:\n      blog_dir: 3\n", r"plugins\.blog\.blog_dir: expected str"),
])
def test_bad_config_names_file_and_setting(tmp_path, text, message) -> None:
    with pytest.raises(BuildError, match=message):
        load_site_config(write(tmp_path, text), tmp_path / "site")


def test_only_yaml_configs(tmp_path) -> None:
    with pytest.raises(BuildError, match=r"zensical\.toml: compile reads mkdocs\.yml"):
        load_site_config(write(tmp_path, "[project]\n", "zensical.toml"), tmp_path / "site")
    with pytest.raises(BuildError, match="no such config file"):
        load_site_config(tmp_path / "missing.yml", tmp_path / "site")
