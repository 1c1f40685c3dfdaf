"""The ``site-knowledge`` section of mkdocs.yml, validated the same way for plugin and compile."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_knowledge.compiler.model import BuildError
from site_knowledge.plugin.options import browser_options, load_options


def test_defaults_and_relative_ontology(tmp_path: Path) -> None:
    (tmp_path / "facts.py").write_text("PROFILE = {}\n", encoding="utf-8")
    options = load_options({"ontology": "facts.py", "gateways": ["https://ask.example.org"]},
                           tmp_path / "mkdocs.yml")
    assert Path(options.ontology) == tmp_path / "facts.py"
    assert options.chunk_size == 900 and options.chat is True
    assert browser_options(options).gateways == ["https://ask.example.org"]


@pytest.mark.parametrize(("raw", "message"), [
    ({"chunk_size": 50}, r"mkdocs\.yml: plugins\.site-knowledge\.chunk_size: must be between 200 and 900"),
    ({"chunk_size": "big"}, r"chunk_size: Expected type"),
    ({"engines": ["openai"]}, r"plugins\.site-knowledge\.engines"),
    ({"ontology": "missing.py"}, r"plugins\.site-knowledge\.ontology: .*missing\.py"),
])
def test_bad_options_name_the_file_and_option(tmp_path: Path, raw: dict[str, object],
                                              message: str) -> None:
    with pytest.raises(BuildError, match=message):
        load_options(raw, tmp_path / "mkdocs.yml")
