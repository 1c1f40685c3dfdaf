"""The compiler's inputs from a site's settings: one assembly for every generator adapter."""

from __future__ import annotations

from pathlib import Path

from sites import EXAMPLE

from site_knowledge.compiler.assemble import embedding_cache_dir, load_knowledge_inputs


def test_site_without_ontology_gets_the_generic_prompt() -> None:
    sources, prompt = load_knowledge_inputs(None, "Brisk Point Light")
    assert sources == []
    assert "Brisk Point Light" in prompt.system and "Brisk Point Light" in prompt.refusal


def test_ontology_gives_its_sources_derived_facts_and_prompt() -> None:
    sources, prompt = load_knowledge_inputs(EXAMPLE / "ontology.py", "Teo Varga")
    assert {source.kind for source in sources} == {"ontology"}
    assert {"profile", "career", "derived-facts"} <= {source.id for source in sources}
    assert "Teo" in prompt.system


def test_cache_dir_is_relative_to_the_config_file(tmp_path: Path, monkeypatch) -> None:
    assert embedding_cache_dir(tmp_path, ".cache/sk") == tmp_path / ".cache" / "sk"
    monkeypatch.setenv("SITE_KNOWLEDGE_CACHE", str(tmp_path / "env"))
    assert embedding_cache_dir(tmp_path, None) == tmp_path / "env"
