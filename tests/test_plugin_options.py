"""The ``site-knowledge`` section of mkdocs.yml, validated the same way for plugin and compile."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sites import build_site

from site_knowledge.budgets import DEFAULT_BUDGETS
from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.shards import ShardSizes
from site_knowledge.plugin.options import (
    OPTION_HELP,
    SiteKnowledgeOptions,
    browser_options,
    load_options,
    option_reference,
    site_settings,
)

PLUGIN_ENTRY = "  - site-knowledge:\n"


def test_defaults_and_relative_ontology(tmp_path: Path) -> None:
    (tmp_path / "facts.py").write_text("PROFILE = {}\n", encoding="utf-8")
    options = load_options({"ontology": "facts.py", "gateways": ["https://ask.example.org"]},
                           tmp_path / "mkdocs.yml")
    assert Path(options.ontology) == tmp_path / "facts.py"
    assert options.chunk_size == 900 and options.chat is True and options.budgets == {}
    assert browser_options(options).gateways == ["https://ask.example.org"]
    settings = site_settings(options, "Site", None, tmp_path / "site")
    assert settings.shard_sizes == ShardSizes()


def test_vectors_whole_up_to_sets_where_the_shards_partition_the_vectors(tmp_path: Path) -> None:
    options = load_options({"vectors_whole_up_to": 40}, tmp_path / "mkdocs.yml")
    settings = site_settings(options, "Site", None, tmp_path / "site")
    assert settings.shard_sizes == ShardSizes(whole_rows_bytes=40 * 1048576)


@pytest.mark.parametrize(("raw", "message"), [
    ({"chunk_size": 50}, r"mkdocs\.yml: plugins\.site-knowledge\.chunk_size: must be between 200 and 900"),
    ({"chunk_size": "big"}, r"chunk_size: Expected type"),
    ({"engines": ["openai"]}, r"plugins\.site-knowledge\.engines"),
    ({"ontology": "missing.py"}, r"plugins\.site-knowledge\.ontology: .*missing\.py"),
    ({"budgets": {"gateway": {"answer_tokens": "x"}}},
     r"plugins\.site-knowledge\.budgets\.gateway\.answer_tokens: expected an integer, got 'x'$"),
    ({"budgets": {"gateway": {"answr_tokens": 100}}},
     r"budgets\.gateway\.answr_tokens: unknown key \(known: evidence_chars, history_chars, "
     r"context_tokens, answer_tokens, max_exchanges\)"),
    ({"budgets": {"phone": {}}}, r"budgets\.phone: unknown key \(known: gateway, browser\)"),
    ({"budgets": {"browser": {"max_exchanges": True}}},
     r"budgets\.browser\.max_exchanges: expected an integer, got True"),
    ({"budgets": {"browser": {"evidence_chars": 0}}},
     r"budgets\.browser\.evidence_chars: must be at least 1, got 0"),
    ({"budgets": {"browser": {"answer_tokens": 2048}}},
     r"budgets\.browser\.answer_tokens: 2048 leaves no room for the prompt in context_tokens 2048"),
    ({"budgets": {"browser": 900}}, r"budgets\.browser: expected a mapping of fields, got 900"),
    ({"budgets": [900]}, r"plugins\.site-knowledge\.budgets: expected a mapping of readers"),
    ({"vectors_whole_up_to": -1},
     r"plugins\.site-knowledge\.vectors_whole_up_to: must be 0 or more megabytes, not -1"),
])
def test_bad_options_name_the_file_and_option(tmp_path: Path, raw: dict[str, object],
                                              message: str) -> None:
    with pytest.raises(BuildError, match=message):
        load_options(raw, tmp_path / "mkdocs.yml")


def test_empty_budgets_are_no_overrides(tmp_path: Path) -> None:
    assert load_options({"budgets": None}, tmp_path / "mkdocs.yml").budgets == {}


def test_every_option_has_a_type_and_description() -> None:
    reference = option_reference()
    assert [doc.name for doc in reference] == [name for name, _ in SiteKnowledgeOptions._schema]
    assert [doc.name for doc in reference] == list(OPTION_HELP)
    assert all(doc.type and doc.description.endswith(".") for doc in reference)
    assert {doc.name: doc.default for doc in reference}["chunk_size"] == 900


def _with_options(config_file: Path, lines: str) -> Path:
    """The site's config with ``lines`` (YAML, six spaces in) added to its plugin entry."""
    text = config_file.read_text(encoding="utf-8")
    assert text.count(PLUGIN_ENTRY) == 1, f"{config_file} has no '{PLUGIN_ENTRY.strip()}' entry"
    config_file.write_text(text.replace(PLUGIN_ENTRY, PLUGIN_ENTRY + lines), encoding="utf-8")
    return config_file


@pytest.mark.parametrize(("budgets", "key"), [
    ('{gateway: {answer_tokens: "x"}}', "budgets.gateway.answer_tokens: expected an integer, got 'x'"),
    ("{gateway: {answr_tokens: 100}}", "budgets.gateway.answr_tokens: unknown key (known: "),
])
def test_mkdocs_build_stops_at_a_bad_budget_naming_its_key(example_copy: Path, tmp_path: Path,
                                                            budgets: str, key: str) -> None:
    config_file = _with_options(example_copy, f"      budgets: {budgets}\n")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(config_file), "-d", str(tmp_path / "site")],
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True,
        timeout=120, check=False,
    )
    assert done.returncode != 0
    assert f"Plugin 'site-knowledge' option 'budgets': {key}" in done.stderr, done.stderr
    assert not (tmp_path / "site").exists()


@pytest.mark.slow
def test_valid_budgets_reach_the_artifact(example_copy: Path, tmp_path: Path) -> None:
    config_file = _with_options(example_copy, "      budgets: {browser: {evidence_chars: 900}}\n")
    budgets = build_site(config_file, tmp_path / "site").artifact["prompt"]["budgets"]
    assert budgets == {"gateway": DEFAULT_BUDGETS["gateway"],
                       "browser": {**DEFAULT_BUDGETS["browser"], "evidence_chars": 900}}
