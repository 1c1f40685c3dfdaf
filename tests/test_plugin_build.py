"""Real ``mkdocs build`` runs of the example site and netbox-docs with the plugin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mkdocs.exceptions import Abort, PluginError
from sites import REPO, BuiltSite, build_site

from site_knowledge.compiler.model import ID_PATTERN, MAX_PASSAGE_CHARS

SECRETS = [line.strip() for line in
           (REPO / "tests" / "data" / "draft_secrets.txt").read_text(encoding="utf-8").splitlines()
           if line.strip()]


def _built_file_for(site_dir: Path, url: str) -> Path:
    path = url.split("#")[0]
    return site_dir / path / "index.html" if path.endswith("/") or not path else site_dir / path


def _check_artifact(site: BuiltSite) -> None:
    artifact = site.artifact
    assert artifact["passages"], "no passages"
    for passage in artifact["passages"]:
        assert len(passage["text"]) <= MAX_PASSAGE_CHARS
        assert ID_PATTERN.match(passage["id"])
        built = _built_file_for(site.site_dir, passage["url"])
        assert built.is_file(), f"{passage['id']} points at missing {passage['url']}"
        anchor = passage["url"].partition("#")[2]
        if anchor:
            assert f'id="{anchor}"' in built.read_text(encoding="utf-8"), passage["url"]


def test_example_site_artifact_is_valid_and_complete(example_site):
    _check_artifact(example_site)
    kinds = {s["kind"] for s in example_site.artifact["sources"]}
    assert kinds == {"ontology", "page"}
    paths = {s["path"] for s in example_site.artifact["sources"] if s["path"]}
    assert any(p.startswith("blog/posts/") for p in paths)
    assert not any("/archive/" in p or "/category/" in p for p in paths)
    post = next(s for s in example_site.artifact["sources"] if (s["path"] or "").startswith("blog/posts/"))
    assert re.match(r"blog/\d{4}/\d{2}/\d{2}/", post["url"]), "post URLs are the built ones"


def test_drafts_never_reach_the_artifact(example_site):
    assert len(SECRETS) >= 3
    text = example_site.artifact_path.read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in text


def test_drafts_never_reach_the_artifact_in_serve_mode(example_copy, tmp_path):
    site = build_site(example_copy, tmp_path / "served", serve=True)
    rendered = "".join(p.read_text(encoding="utf-8") for p in site.site_dir.rglob("*.html"))
    assert sum(secret in rendered for secret in SECRETS) >= 2, "serve mode renders the drafts"
    text = site.artifact_path.read_text(encoding="utf-8")
    assert not any(secret in text for secret in SECRETS)


def test_launcher_is_injected_and_page_opt_out_respected(example_site):
    home = (example_site.site_dir / "index.html").read_text(encoding="utf-8")
    assert "site-knowledge-config" in home


def test_netbox_artifact_is_valid(netbox_site):
    _check_artifact(netbox_site)
    assert netbox_site.report.pages >= 250
    assert netbox_site.report.passages > 1500


@pytest.mark.parametrize(("site_name", "question", "expected_path"), [
    ("netbox", "How do I configure LDAP authentication?", "installation/6-ldap.md"),
    ("netbox", "How do I upgrade to a new release?", "installation/upgrading.md"),
    ("netbox", "What is a prefix in IPAM?", "models/ipam/prefix.md"),
    ("example", "What is slotmeter?", "projects/index.md"),
    ("example", "Why did Teo move to Vienna?", "blog/posts/vienna-fennec.md"),
])
def test_retrieval_finds_the_right_page(request, site_name, question, expected_path):
    from site_knowledge.retrieval import load_index

    site = request.getfixturevalue(f"{site_name}_site")
    index = load_index(site.artifact_path)
    found = {}
    for mode in ("bm25", "dense"):
        result = index.search(question, mode=mode, top_k=10)
        assert result.answerable, (question, result.gate)
        found[mode] = expected_path in [hit.source.path for hit in result.hits]
    assert any(found.values()), found
    hybrid = index.search(question, top_k=4)
    assert expected_path in [hit.source.path for hit in hybrid.hits], hybrid.hits


@pytest.mark.parametrize("site_name", ["netbox", "example"])
def test_gate_refuses_off_topic_and_answers_on_topic(request, site_name):
    from site_knowledge.retrieval import load_index

    site = request.getfixturevalue(f"{site_name}_site")
    index = load_index(site.artifact_path)
    for question in ["Who won the Eurovision song contest in 1998?", "recipe for banana bread",
                     "What is the airspeed velocity of an unladen swallow?", "qwxz plorf zzkt"]:
        result = index.search(question)
        assert not result.answerable and result.hits == [], (question, result.gate)
    on_topic = {"netbox": "How are VLANs grouped?", "example": "Where does Teo live now?"}
    assert index.search(on_topic[site_name]).answerable


def test_second_build_embeds_nothing_and_an_edit_reembeds_one_page(example_copy, tmp_path):
    cache = str(tmp_path / "cache")
    first = build_site(example_copy, tmp_path / "one", cache_dir=cache)
    assert first.report.embedded == first.report.passages > 0
    second = build_site(example_copy, tmp_path / "two", cache_dir=cache)
    assert second.report.embedded == 0
    assert second.report.cache_hits == second.report.passages
    assert {**second.artifact, "built_at": ""} == {**first.artifact, "built_at": ""}
    page = example_copy.parent / "docs" / "contact.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n\nA brand new closing line.\n",
                    encoding="utf-8")
    third = build_site(example_copy, tmp_path / "three", cache_dir=cache)
    changed = [p for p in third.artifact["passages"] if p["source"] == "contact"]
    assert 0 < third.report.embedded <= len(changed)


def _write(docs: Path, name: str, data: bytes) -> None:
    (docs / name).write_bytes(data)


@pytest.mark.parametrize(("name", "data", "message"), [
    ("broken.md", b"---\ntitle: [unclosed\n---\n# Hi\n", r"broken\.md: malformed front matter"),
    ("latin1.md", "# Caf\u00e9\n".encode("latin-1"), r"latin1\.md: not UTF-8 \(byte 5, line 1\)"),
    ("list.md", b"---\n- a\n- b\n---\n# Hi\n", r"list\.md: front matter is not a mapping"),
    ("a_b.md", b"# One\n", r"duplicate source id 'a-b'"),
])
def test_bad_pages_fail_the_build_with_file_and_reason(example_copy, tmp_path, caplog, name, data,
                                                      message):
    docs = example_copy.parent / "docs"
    _write(docs, name, data)
    if name == "a_b.md":
        _write(docs, "a-b.md", b"# Two\n")
    with pytest.raises((PluginError, Abort)) as caught:
        build_site(example_copy, tmp_path / "site")
    said = f"{caught.value}\n{caplog.text}"
    assert re.search(message, said), said
    assert not (tmp_path / "site" / "assets" / "site-knowledge" / "site-knowledge.json").exists()


def test_bad_ontology_fails_the_build(example_copy, tmp_path, caplog):
    ontology = example_copy.parent / "ontology.py"
    ontology.write_text(ontology.read_text(encoding="utf-8") + "\nCAREER = CAREER + [CAREER[0]]\n",
                        encoding="utf-8")
    with pytest.raises((PluginError, Abort)) as caught:
        build_site(example_copy, tmp_path / "site")
    said = f"{caught.value}\n{caplog.text}"
    assert re.search(r"ontology\.py.*duplicate", said), said


def test_an_interrupted_write_keeps_the_previous_artifact(example_site, tmp_path, monkeypatch):
    import shutil

    from site_knowledge.compiler import writer
    from site_knowledge.retrieval.artifact import load_artifact

    folder = tmp_path / "out"
    shutil.copytree(example_site.artifact_path.parent, folder,
                    ignore=shutil.ignore_patterns("*.js", "*.css", "vendor", "*.wasm", "*.onnx"))
    before = (folder / "site-knowledge.json").read_bytes()
    document, _ = load_artifact(folder)
    reference = document["gate"]["elsewhere"].pop("vectors")

    def crash(path: Path, data: bytes) -> None:
        if path.name == "site-knowledge.json":
            raise OSError("disk full (fault injected: a crash cannot be produced otherwise)")
        path.write_bytes(data)

    monkeypatch.setattr(writer, "atomic_write", crash)
    with pytest.raises(OSError):
        writer.write_artifact(document, writer.Sidecars(b"\x00" * (388 * document["vectors"]["count"]),
                                                        reference), folder)
    assert (folder / "site-knowledge.json").read_bytes() == before
    load_artifact(folder)


def test_default_mkdocs_theme_site(tmp_path):
    docs = tmp_path / "docs"
    (docs / "drafts").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\nThe tram clock shows arrivals.\n", encoding="utf-8")
    (docs / "guide.md").write_text("# Guide\n\n## Setup\n\nRun the installer, then restart.\n",
                                   encoding="utf-8")
    (docs / "private.md").write_text("---\nsite_knowledge: false\n---\n# Private\n\nZEBRA-99\n",
                                     encoding="utf-8")
    (docs / "drafts" / "wip.md").write_text("# WIP\n\nPELICAN-12\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: Plain\ntheme: mkdocs\ndraft_docs: |\n  drafts/\n"
        "plugins:\n  - search\n  - site-knowledge\n", encoding="utf-8")
    site = build_site(tmp_path / "mkdocs.yml", tmp_path / "site")
    text = site.artifact_path.read_text(encoding="utf-8")
    assert "tram clock" in text and "installer" in text
    assert "ZEBRA-99" not in text and "PELICAN-12" not in text
    assert {s["path"] for s in site.artifact["sources"]} == {"index.md", "guide.md"}
    assert "site-knowledge-config" in (site.site_dir / "guide" / "index.html").read_text("utf-8")
    assert "site-knowledge-config" not in (site.site_dir / "private" / "index.html").read_text("utf-8")
