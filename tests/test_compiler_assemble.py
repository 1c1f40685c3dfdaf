"""The compiler's inputs from a site's settings: one assembly for every generator adapter."""

from __future__ import annotations

from pathlib import Path

from sites import EXAMPLE, REPO

from site_knowledge.compiler.assemble import embedding_cache_dir, load_knowledge_inputs
from site_knowledge.compiler.compiler import PageInput

PRODUCT = REPO / "examples" / "product-docs" / "ontology.py"


def test_site_without_ontology_gets_the_generic_prompt() -> None:
    sources, prompt = load_knowledge_inputs(None, "Brisk Point Light")
    assert sources == []
    assert "Brisk Point Light" in prompt.system and "Brisk Point Light" in prompt.refusal


def test_ontology_gives_its_sources_derived_facts_and_prompt() -> None:
    sources, prompt = load_knowledge_inputs(EXAMPLE / "ontology.py", "Teo Varga")
    assert {source.kind for source in sources} == {"ontology"}
    assert {"profile", "career", "derived-facts"} <= {source.id for source in sources}
    assert "Teo" in prompt.system


def test_ontology_of_entities_gives_fact_sources_and_a_prompt_naming_them() -> None:
    pages = [PageInput("index.md", "", "NetBox", "", "<p>Apache 2</p>"),
             PageInput("installation/index.md", "installation/", "Installation", "",
                       '<h2 id="requirements">Requirements</h2>'),
             PageInput("installation/3-netbox.md", "installation/3-netbox/", "NetBox Installation",
                       "", '<h3 id="option-b-clone-the-git-repository">Option B</h3>')]
    sources, prompt = load_knowledge_inputs(PRODUCT, "NetBox Docs", pages)
    assert [source.id for source in sources] == [
        "netbox-index", "netbox-installation-index", "netbox-installation-3-netbox"]
    assert prompt.system.startswith("You answer visitors' questions about NetBox on the website")
    assert "Facts about versions are as of the date they state" in prompt.system
    assert "Ana" not in prompt.examples, "the product examples, not the person's"


def test_cache_dir_is_relative_to_the_config_file(tmp_path: Path, monkeypatch) -> None:
    assert embedding_cache_dir(tmp_path, ".cache/sk") == tmp_path / ".cache" / "sk"
    monkeypatch.setenv("SITE_KNOWLEDGE_CACHE", str(tmp_path / "env"))
    assert embedding_cache_dir(tmp_path, None) == tmp_path / "env"
