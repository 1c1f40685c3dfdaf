"""The artifact's compact form and its loaders: round trips on real builds, the JavaScript twin,
an older format, and bad or tampered artifacts."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from browser_sites import run_node

from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.writer import Sidecars, write_artifact
from site_knowledge.retrieval import ArtifactError, load_index
from site_knowledge.retrieval.artifact import (
    _fast_validator,
    _schema_validator,
    load_artifact,
    validate_artifact,
)
from site_knowledge.retrieval.artifact_form import (
    SCHEMA_VERSION,
    FormError,
    compact,
    expand,
    heading_slug,
)

DATA = Path(__file__).parent / "data"


def _copy_fixture(tmp_path: Path) -> Path:
    target = tmp_path / "artifact"
    shutil.copytree(DATA / "fixture-artifact", target)
    return target / "site-knowledge.json"


def _source(id_: str, url: str, path: str | None, kind: str = "page", **fields: Any) -> dict[str, Any]:
    return {"id": id_, "kind": kind, "title": fields.get("title", id_.title()),
            "description": fields.get("description", ""), "url": url,
            "authority": fields.get("authority", "prose"), "path": path,
            "lang": fields.get("lang", "en")}


def _passage(source: dict[str, Any], index: int, heading: str, anchor: str, text: str) -> dict[str, Any]:
    url = f"{source['url']}#{anchor}" if anchor else source["url"]
    return {"id": f"{source['id']}#{index}", "source": source["id"], "heading": heading,
            "text": text, "url": url}


def _awkward_document() -> dict[str, Any]:
    """Every case the compact form treats specially, in one expanded document."""
    profile = _source("profile", "", None, "ontology", title="Profile", authority="fact",
                      description="Who she is.")
    home = _source("index", "", "index.md")
    nested = _source("guide", "guide/", "guide/index.md")
    clash = _source("page-profile", "profile/", "profile.md", description="Set in front matter.")
    unicode_page = _source("zurich-notes", "zurich-notes/", "Zürich notes.md")
    blog = _source("blog-posts-hello", "blog/2024/03/01/hello/", "blog/posts/hello.md", lang="zh")
    empty = _source("empty", "empty/", "empty.md", lang="")
    sources = [profile, home, nested, clash, unicode_page, blog, empty]
    passages = [
        _passage(profile, 0, "Profile", "", "Ada lives in Lisbon."),
        _passage(profile, 1, "Profile (continued)", "", "She moved there in 2019."),
        _passage(home, 0, "", "", "Welcome \"home\".\n\nSecond\tblock \\ with escapes."),
        _passage(home, 1, "Welcome", "welcome", "x" * 900),
        _passage(nested, 0, "Guide > Install > Linux", "linux", "apt-get install it."),
        _passage(nested, 1, "Guide > Install > Linux", "linux", "Then run it."),
        _passage(nested, 2, "Guide > Install > macOS", "macos", "brew install it."),
        _passage(nested, 3, "Guide > Install", "install", "Either way works."),
        _passage(nested, 4, "Guide > Example", "example", "First example."),
        _passage(nested, 5, "Guide > Example", "example_1", "Second example, same heading."),
        _passage(nested, 6, "Guide > Example", "example", "Back to the first."),
        _passage(nested, 7, "", "", "A passage with no heading after headed ones."),
        _passage(clash, 0, "Profile page", "profile-page", "The page beside the ontology."),
        _passage(unicode_page, 0, "Zürich > Café 🚋 notes", "cafe-notes", "Tram clock 🚋 " * 20),
        _passage(unicode_page, 1, "Zürich > Open > Close", "custom-id", "An anchor set by hand."),
        _passage(unicode_page, 2, "A > B", "", "A heading without an anchor."),
        _passage(blog, 0, "Hello", "hello", "A post whose URL is not its path."),
    ]
    home["description"] = passages[2]["text"][:200]
    unicode_page["description"] = passages[13]["text"][:200]
    return {"schema": SCHEMA_VERSION, "site": {"lang": "en"}, "sources": sources, "passages": passages,
            "vectors": {"count": len(passages)}}


def test_compact_then_expand_restores_every_awkward_case():
    document = _awkward_document()
    on_disk = compact(document)
    assert expand(on_disk) == document
    by_title = {s["title"]: s for s in on_disk["sources"]}
    assert "id" not in by_title["Index"] and "path" not in by_title["Index"]
    assert by_title["Guide"]["path"] == "guide/index.md"
    assert by_title["Page-Profile"]["id"] == "page-profile"
    assert by_title["Zurich-Notes"]["id"] == "zurich-notes"
    assert "description" not in by_title["Index"] and "description" not in by_title["Zurich-Notes"]
    assert by_title["Page-Profile"]["description"] == "Set in front matter."
    assert "lang" not in by_title["Index"], "the site's language is left out"
    assert by_title["Blog-Posts-Hello"]["lang"] == "zh" and by_title["Empty"]["lang"] == ""


def test_expand_in_javascript_equals_python(tmp_path):
    on_disk = compact(_awkward_document())
    source, out = tmp_path / "in.json", tmp_path / "out.json"
    source.write_text(json.dumps(on_disk, ensure_ascii=False), encoding="utf-8")
    run_node("expand_artifact.mjs", str(source), str(out))
    assert json.loads(out.read_text(encoding="utf-8")) == {"expanded": expand(on_disk)}


def test_real_build_round_trips_and_both_loaders_agree(example_site, tmp_path):
    on_disk = json.loads(example_site.artifact_path.read_text(encoding="utf-8"))
    assert on_disk["schema"] == SCHEMA_VERSION and "passages" not in on_disk
    expanded, _ = load_artifact(example_site.site_dir)
    reference = expanded["gate"]["elsewhere"].pop("vectors")
    folder = example_site.artifact_path.parent
    assert reference == (folder / on_disk["gate"]["elsewhere"]["file"]).read_bytes()
    assert compact(expanded) == on_disk
    out = tmp_path / "out.json"
    run_node("expand_artifact.mjs", str(example_site.artifact_path), str(out))
    assert json.loads(out.read_text(encoding="utf-8")) == {"expanded": expanded}


def test_heading_slug_follows_python_markdown_for_ascii_only():
    assert heading_slug("Install on Linux (x86_64)") == "install-on-linux-x86_64"
    assert heading_slug("  Data & Validation -- Parameters ") == "data-validation-parameters"
    assert heading_slug("Café") is None


def test_an_older_artifact_asks_for_a_rebuild_in_both_readers(tmp_path):
    path = _copy_fixture(tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["schema"] = "site-knowledge/1"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ArtifactError, match=r"site-knowledge/1 .*rebuild the site"):
        load_index(path)
    out = tmp_path / "out.json"
    run_node("expand_artifact.mjs", str(path), str(out))
    assert "rebuild the site" in json.loads(out.read_text(encoding="utf-8"))["error"]


def _first(document: dict[str, Any]) -> dict[str, Any]:
    source: dict[str, Any] = document["sources"][0]
    return source


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(schema="site-knowledge/9"), "unknown artifact schema"),
    (lambda d: _first(d)["passages"].append("x" * 901), "sources/0/passages/"),
    (lambda d: _first(d).update(id="Bad Id"), "sources/0/id"),
    (lambda d: _first(d).update(url="https://evil.example/"), "sources/0/url"),
    (lambda d: _first(d).update(url="../../etc/"), "sources/0/url"),
    (lambda d: _first(d)["headings"].append([-1, "Bad", "has space"]), "sources/0/headings"),
    (lambda d: _first(d)["passages"].insert(0, 7), "unknown heading 7"),
    (lambda d: _first(d)["headings"].insert(0, [3, "Forward"]), "unknown parent 3"),
    (lambda d: _first(d)["passages"].append("one passage more"), "count"),
    (lambda d: d["sources"].append(copy.deepcopy(_first(d))), "duplicate source id"),
    (lambda d: d["embedding"].update(model="other/model"), "embedding/model"),
    (lambda d: d["gate"]["elsewhere"]["left_out"].append(d["gate"]["elsewhere"]["count"]),
     "left_out names a row beyond"),
    (lambda d: d["gate"]["elsewhere"].update(file="site-knowledge.missing.elsewhere.bin"),
     "cannot read the gate's reference vectors"),
])
def test_readers_reject_bad_artifacts(tmp_path, change, message):
    path = _copy_fixture(tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ArtifactError, match=message):
        load_index(path)


@pytest.mark.parametrize("sidecar_name", ["*.vectors.bin", "*.elsewhere.bin"])
def test_readers_reject_a_tampered_sidecar(tmp_path, sidecar_name):
    path = _copy_fixture(tmp_path)
    sidecar = next(path.parent.glob(sidecar_name))
    blob = bytearray(sidecar.read_bytes())
    blob[0] ^= 1
    sidecar.write_bytes(bytes(blob))
    with pytest.raises(ArtifactError, match="SHA-256"):
        load_index(path)


def test_the_writer_refuses_what_the_compact_form_cannot_restore(tmp_path):
    expanded, blob = load_artifact(_copy_fixture(tmp_path))
    sidecars = Sidecars(blob, expanded["gate"]["elsewhere"].pop("vectors"))
    moved = copy.deepcopy(expanded)
    moved["passages"][0]["url"] = "elsewhere/#x"
    with pytest.raises(BuildError, match="is not 'racks/' plus an anchor"):
        write_artifact(moved, sidecars, tmp_path / "out")
    shuffled = copy.deepcopy(expanded)
    shuffled["passages"].reverse()
    with pytest.raises(BuildError, match="source order"):
        write_artifact(shuffled, sidecars, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(FormError, match="should be racks#0"):
        compact({**expanded, "passages": [{**expanded["passages"][0], "id": "racks#5"}]})
    assert validate_artifact(compact(expanded)) == expanded


def test_the_writer_names_both_sidecars_by_content_and_removes_stale_ones(tmp_path):
    expanded, blob = load_artifact(_copy_fixture(tmp_path))
    reference = expanded["gate"]["elsewhere"].pop("vectors")
    out = tmp_path / "out"
    write_artifact(copy.deepcopy(expanded), Sidecars(blob, reference), out)
    changed = bytearray(reference)
    changed[0] ^= 1
    write_artifact(copy.deepcopy(expanded), Sidecars(blob, bytes(changed)), out)
    on_disk = json.loads((out / "site-knowledge.json").read_text(encoding="utf-8"))
    names = {on_disk["vectors"]["file"], on_disk["gate"]["elsewhere"]["file"]}
    assert {path.name for path in out.glob("*.bin")} == names
    assert on_disk["gate"]["elsewhere"]["file"].endswith(".elsewhere.bin")
    assert load_artifact(out)[0]["gate"]["elsewhere"]["vectors"] == bytes(changed)


@pytest.mark.parametrize("change", [
    lambda d: _first(d).update(title=7),
    lambda d: _first(d)["passages"].append(1.5),
    lambda d: _first(d)["headings"].append({"leaf": "x"}),
    lambda d: _first(d).pop("url"),
    lambda d: d["vectors"].update(count=-1),
    lambda d: d["gate"].update(min_cosine="high"),
    lambda d: d.update(unexpected=True),
    lambda d: d["site"].update(lang="English"),
])
def test_the_fast_schema_check_refuses_what_jsonschema_refuses(tmp_path, change):
    document = json.loads(_copy_fixture(tmp_path).read_text(encoding="utf-8"))
    assert _fast_validator().is_valid(document)
    assert not list(_schema_validator().iter_errors(document))
    change(document)
    assert list(_schema_validator().iter_errors(document)), "jsonschema refuses it"
    assert not _fast_validator().is_valid(document)
    with pytest.raises(ArtifactError, match="artifact invalid at"):
        validate_artifact(document)
