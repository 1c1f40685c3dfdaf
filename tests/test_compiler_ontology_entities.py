"""The generic form's entities as fact sources: per cited page, checked against real pages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from mkdocs.exceptions import Abort, PluginError
from sites import NETBOX, REPO, build_site

from site_knowledge.compiler.compiler import PageInput
from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.ontology import Ontology
from site_knowledge.compiler.ontology_check import load_ontology
from site_knowledge.compiler.ontology_entities import entity_sources
from site_knowledge.retrieval import load_index

PRODUCT = REPO / "examples" / "product-docs" / "ontology.py"
QUIRE = """
ENTITIES = [
    {"id": "quire", "name": "Quire", "kind": "product", "attributes": [
        {"name": "licence", "value": "MIT", "source": "index.md"},
        {"name": "supported Python versions", "value": ["3.11", "3.12"],
         "source": "install.md#requirements", "as_of": "2025-03-14"},
        {"name": "install command", "value": "pip install quire", "source": "install.md"},
    ]},
    {"id": "quire-cloud", "name": "Quire Cloud", "attributes": [
        {"name": "regions", "value": 3, "source": "index.md", "as_of": "2025"},
    ]},
]
"""
PAGES = (
    PageInput("index.md", "", "Quire", "", "<h1 id=\"quire\">Quire</h1><p>MIT.</p>"),
    PageInput("install.md", "install/", "Installing Quire", "",
              "<h2 id=\"requirements\">Requirements</h2><p>Python 3.11, 3.12.</p>"),
)


def _quire(tmp_path: Path, text: str = QUIRE) -> Ontology:
    path = tmp_path / "ontology.py"
    path.write_text(text, encoding="utf-8")
    return load_ontology(path)


def test_each_entity_gives_one_fact_source_per_cited_page(tmp_path: Path) -> None:
    sources = entity_sources(_quire(tmp_path), PAGES)
    assert [(s.id, s.url, s.title) for s in sources] == [
        ("quire-index", "", "Quire facts: Quire"),
        ("quire-install", "install/", "Quire facts: Installing Quire"),
        ("quire-cloud-index", "", "Quire Cloud facts: Quire"),
    ]
    assert {(s.kind, s.authority, s.path) for s in sources} == {("ontology", "fact", None)}
    install = sources[1]
    assert [(s.heading, s.text, s.anchor) for s in install.sections] == [
        ("Quire: supported Python versions",
         "Quire's supported Python versions: 3.11, 3.12 (as of 14 March 2025).", "requirements"),
        ("Quire: install command", "Quire's install command: pip install quire.", ""),
    ]
    assert "product" in sources[0].description and "licence" in sources[0].description
    assert sources[2].sections[0].text == "Quire Cloud's regions: 3 (as of 2025)."


@pytest.mark.parametrize(("old", "new", "reason"), [
    ('"source": "install.md#', '"source": "instal.md#',
     "source page 'instal.md' is not a published page of this site (did you mean 'install.md'?)"),
    ("#requirements", "#prerequisites", "source page 'install.md' has no anchor #prerequisites"),
])
def test_a_cited_page_or_anchor_the_site_lacks_names_entity_attribute_and_page(
        tmp_path: Path, old: str, new: str, reason: str) -> None:
    with pytest.raises(BuildError) as caught:
        entity_sources(_quire(tmp_path, QUIRE.replace(old, new)), PAGES)
    assert caught.value.where == (
        "ontology.py: ENTITIES[0] ('quire') attributes[1] ('supported Python versions')")
    assert caught.value.reason == reason


def test_a_person_ontology_has_no_entity_sources() -> None:
    assert entity_sources(load_ontology(REPO / "examples" / "homepage" / "ontology.py"), PAGES) == []


def _netbox_subset(root: Path) -> Path:
    """The pages the product-docs example cites, copied from netbox-docs, and a config that
    builds them with the plugin and that example's ontology."""
    for page in ("index.md", "installation/index.md", "installation/3-netbox.md"):
        (root / "docs" / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(NETBOX / "docs" / page, root / "docs" / page)
    shutil.copy(PRODUCT, root / "ontology.py")
    corpus = yaml.safe_load((NETBOX / "mkdocs.yml").read_text(encoding="utf-8"))
    config = {"site_name": "NetBox Docs", "markdown_extensions": corpus["markdown_extensions"],
              "plugins": [{"site-knowledge": {"ontology": "ontology.py", "chat": False}}]}
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return root / "mkdocs.yml"


@pytest.mark.slow
def test_product_docs_facts_reach_the_artifact_and_are_found(tmp_path: Path) -> None:
    built = build_site(_netbox_subset(tmp_path / "src"), tmp_path / "site")
    sources = {s["id"]: s for s in built.artifact["sources"]}
    assert sources["netbox-index"]["url"] == "" and sources["netbox-index"]["authority"] == "fact"
    assert sources["netbox-installation-index"]["url"] == "installation/"
    passages = {p["text"]: p["url"] for p in built.artifact["passages"]}
    assert passages["NetBox's supported Python versions: 3.12, 3.13, 3.14 (as of August 2026)."] \
        == "installation/#requirements"
    assert built.artifact["prompt"]["system"].startswith(
        "You answer visitors' questions about NetBox on the website NetBox Docs.")
    result = load_index(built.site_dir).search("What licence is NetBox released under?")
    assert result.answerable
    assert any(hit.source.id == "netbox-index" and "Apache License 2.0" in hit.passage.text
               for hit in result.hits), [hit.passage.text for hit in result.hits]


@pytest.mark.slow
def test_a_fact_citing_a_missing_page_fails_the_build(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    config_file = _netbox_subset(tmp_path / "src")
    (tmp_path / "src" / "docs" / "installation" / "3-netbox.md").unlink()
    with pytest.raises((PluginError, Abort)) as caught:
        build_site(config_file, tmp_path / "site")
    said = f"{caught.value}\n{caplog.text}"
    assert "ontology.py: ENTITIES[0] ('netbox') attributes[5] ('install command (from git)'): " \
           "source page 'installation/3-netbox.md' is not a published page" in said, said
    assert not (tmp_path / "site" / "assets" / "site-knowledge" / "site-knowledge.json").exists()
