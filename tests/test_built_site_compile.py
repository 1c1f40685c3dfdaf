"""``site-knowledge compile`` after real builds: Zensical and MkDocs without the plugin.

Each site is also built with the plugin into the same embedding cache, and the two artifacts are
compared whole (only ``built_at`` may differ): same sources, passages (ids, headings, texts,
URLs), vectors, gate and prompt. A compile after the plugin's build embeds nothing, which also
shows that both sent the encoder the same texts.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sites import (
    OUTPUT,
    REPO,
    BuiltSite,
    build_site,
    copy_example,
    copy_netbox,
    plain_build,
    without_plugin,
    zensical_build,
)

from site_knowledge.built_site.compile import CompileResult, compile_built_site
from site_knowledge.built_site.content import THEMES, ContentRule, parse_selectors
from site_knowledge.compiler.embed_cache import EmbeddingCache
from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.shards import MANIFEST_NAME, SHARD_DIR, ShardSizes, shard_artifact
from site_knowledge.embedding import Encoder
from site_knowledge.retrieval.artifact import ARTIFACT_NAME, load_artifact

pytestmark = pytest.mark.slow

SECRETS = [line.strip() for line in
           (REPO / "tests" / "data" / "draft_secrets.txt").read_text(encoding="utf-8").splitlines()
           if line.strip()]
DRF_QUESTIONS = REPO / "evals" / "drf-docs" / "questions.jsonl"
CONFIG_TAG = 'id="site-knowledge-config"'


def compile_site(site: Path, config_file: Path, cache_dir: Path) -> CompileResult:
    result = compile_built_site(site, config_file, cache=EmbeddingCache(Encoder(), cache_dir))
    assert result is not None
    return result


def differences(plugin: dict[str, Any], compiled: dict[str, Any], texts_only: bool = False) -> list[str]:
    """Every field, source and passage where two artifacts differ (``built_at`` aside); with
    ``texts_only``, sources and passages only."""
    out = [] if texts_only else [
        key for key in plugin.keys() | compiled.keys()
        if key not in ("built_at", "sources", "passages") and plugin.get(key) != compiled.get(key)]
    for kind in ("sources", "passages"):
        mine = {item["id"]: item for item in plugin[kind]}
        theirs = {item["id"]: item for item in compiled[kind]}
        out += [f"{kind}: {key} only in the plugin's" for key in mine.keys() - theirs.keys()]
        out += [f"{kind}: {key} only in compile's" for key in theirs.keys() - mine.keys()]
        out += [f"{kind}: {key}: {mine[key]} != {theirs[key]}"
                for key in mine.keys() & theirs.keys() if mine[key] != theirs[key]]
        if list(mine) != list(theirs):
            out.append(f"{kind}: another order")
    return out


def pages_with_launcher(site: Path) -> dict[str, int]:
    return {path.relative_to(site).as_posix(): text.count(CONFIG_TAG)
            for path in site.rglob("*.html")
            if CONFIG_TAG in (text := path.read_text(encoding="utf-8"))}


@dataclass
class Example:
    """The example site built by the plugin, and by Zensical then compiled, with one cache."""

    plugin: BuiltSite
    site: Path
    result: CompileResult
    cache: Path


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Example:
    root = tmp_path_factory.mktemp("zensical")
    cache = root / "cache"
    plugin = build_site(copy_example(root / "plugin"), root / "plugin-site", cache_dir=str(cache))
    config_file = copy_example(root / "src")
    site = zensical_build(config_file)
    return Example(plugin, site, compile_site(site, config_file, cache), cache)


def test_zensical_build_gets_the_plugins_artifact(example):
    plugin, site, result = example.plugin, example.site, example.result
    artifact, _ = load_artifact(site)  # validates against the schema, vectors included
    assert differences(plugin.artifact, artifact) == []
    assert result.report.passages == plugin.report.passages > 100
    assert result.report.embedded == 0, "the plugin's build already embedded every passage"
    assert result.warnings == []


def test_zensical_build_keeps_drafts_out(example):
    text = (example.site / OUTPUT / "site-knowledge.json").read_text(encoding="utf-8")
    assert len(SECRETS) >= 3
    assert not any(secret in text for secret in SECRETS)


def test_launcher_on_the_pages_the_plugin_injects_into(example):
    plugin, site, result = example.plugin, example.site, example.result
    compiled = pages_with_launcher(site)
    assert compiled == pages_with_launcher(plugin.site_dir)
    assert set(compiled.values()) == {1}
    assert "404.html" not in compiled and result.with_launcher == len(compiled)
    same = "blog/2024/03/09/on-call-decade/index.html"
    tags = [re.search(r'<script type="application/json" id="site-knowledge-config">.*?'
                      r'launcher\.js"></script>', (s / same).read_text(encoding="utf-8"), re.S)
            for s in (plugin.site_dir, site)]
    assert tags[0] and tags[1] and tags[0].group(0) == tags[1].group(0)
    assert (site / OUTPUT / "launcher.js").is_file()


def test_a_second_run_changes_nothing(example):
    site, first = example.site, example.result
    before = {p: p.read_bytes() for p in site.rglob("*.html")}
    again = compile_site(site, site.parent / "mkdocs.yml", example.cache)
    assert again.report.embedded == 0
    assert again.rewritten == 0 and again.with_launcher == first.with_launcher
    assert {p: p.read_bytes() for p in site.rglob("*.html")} == before
    assert set(pages_with_launcher(site).values()) == {1}


def test_serve_rendered_drafts_stay_out(example, tmp_path):
    """`mkdocs serve` renders draft_docs and blog drafts; compile still leaves them out."""
    plugin = example.plugin
    config_file = copy_example(tmp_path / "src")
    site = plain_build(without_plugin(config_file), tmp_path / "served", serve=True)
    rendered = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    assert sum(secret in rendered for secret in SECRETS) >= 2, "serve renders the drafts"
    result = compile_site(site, config_file, example.cache)
    text = (site / OUTPUT / "site-knowledge.json").read_text(encoding="utf-8")
    assert not any(secret in text for secret in SECRETS)
    artifact, _ = load_artifact(site)
    assert differences(plugin.artifact, artifact) == []
    assert result.report.embedded == 0


@pytest.mark.parametrize(("options", "sizes"), [
    ("", ShardSizes()),
    ("      vectors_whole_up_to: 0\n", ShardSizes(whole_rows_bytes=0)),
], ids=["vectors whole", "vectors partitioned"])
def test_a_site_set_to_sharded_gets_its_shards_from_compile(example, tmp_path, options, sizes):
    """``artifact: sharded`` in the config: compile writes the manifest and the shards the
    plugin would, and the launcher loads the manifest. ``vectors_whole_up_to: 0`` cuts even
    this small site's vectors into partitions."""
    config_file = copy_example(tmp_path / "src")
    text = config_file.read_text(encoding="utf-8")
    config_file.write_text(text.replace("  - site-knowledge:\n",
                                        f"  - site-knowledge:\n      artifact: sharded\n{options}"),
                           encoding="utf-8")
    site = zensical_build(config_file)
    result = compile_site(site, config_file, example.cache)
    assets = site / OUTPUT
    manifest = json.loads((assets / MANIFEST_NAME).read_text(encoding="utf-8"))
    single = json.loads((assets / ARTIFACT_NAME).read_text(encoding="utf-8"))
    vectors = (assets / single["vectors"]["file"]).read_bytes()
    assert manifest == shard_artifact(single, vectors, sizes)[0]
    assert ("rows" in manifest["shards"]["dense"]) == (sizes.whole_rows_bytes > 0)
    assert manifest["counts"]["passages"] == result.report.passages
    assert {f"{SHARD_DIR}/{p.name}" for p in (assets / SHARD_DIR).iterdir()} == set(
        shard_artifact(single, vectors, sizes)[1])
    page = (site / "index.html").read_text(encoding="utf-8")
    assert f'"artifact":"{MANIFEST_NAME}"' in page


def test_zensical_build_of_netbox_docs(netbox_site, tmp_path):
    """260 pages by Zensical: the same sources and passages as the plugin's build. The home page
    opens with a logo, not its h1, so MkDocs (and compile) call it "Home". Vectors and gate come
    from the shared default cache here (the session's netbox build), so texts are compared."""
    config_file = copy_netbox(tmp_path / "src", chat=False)
    site = zensical_build(config_file)
    result = compile_built_site(site, config_file)
    assert result is not None and result.warnings == [] and result.with_launcher == 0
    artifact, _ = load_artifact(site)
    assert differences(netbox_site.artifact, artifact, texts_only=True) == []
    assert next(s["title"] for s in artifact["sources"] if s["path"] == "index.md") == "Home"
    assert not (site / OUTPUT / "launcher.js").exists(), "chat: false"


def test_plain_mkdocs_drf_docs_same_passages_and_recall(tmp_path):
    """drf-docs as its authors build it (Material, no plugin), then compile, against the
    plugin's build: the same artifact, so the same rankings and recall on its question set.
    Zensical's build of it (in a copy: Zensical writes site/ beside its config) compiles to the
    same artifact too."""
    from evals.sites import SITES, build
    from site_knowledge.evals import retrieval_eval
    from site_knowledge.evals.dataset import load_questions

    corpus = SITES["drf-docs"].config_file
    cache = tmp_path / "cache"
    plugin_site = build(SITES["drf-docs"], tmp_path / "plugin-site", cache_dir=str(cache))
    plugin, _ = load_artifact(plugin_site)
    site = plain_build(corpus, tmp_path / "site")
    result = compile_site(site, corpus, cache)
    artifact, _ = load_artifact(site)
    assert differences(plugin, artifact) == []
    assert result.report.embedded == 0 and result.report.pages >= 68

    questions = load_questions(DRF_QUESTIONS)
    runs = [retrieval_eval.run(built, questions) for built in (plugin_site, site)]
    assert [r.top for r in runs[1]] == [r.top for r in runs[0]], "same rankings, question by question"
    summaries = [retrieval_eval.summarise(r) for r in runs]
    assert summaries[0]["modes"]["hybrid"]["ranking"]["recall@4"] >= 0.5, "a meaningful set"
    for mode in retrieval_eval.MODES:
        assert summaries[1]["modes"][mode]["ranking"] == summaries[0]["modes"][mode]["ranking"]
    assert summaries[1]["gate"] == summaries[0]["gate"]

    shutil.copytree(corpus.parent, tmp_path / "zensical")
    zensical_site = zensical_build(tmp_path / "zensical" / "mkdocs.yml")
    zensical = compile_site(zensical_site, tmp_path / "zensical" / "mkdocs.yml", cache)
    assert differences(plugin, load_artifact(zensical_site)[0]) == []
    assert zensical.report.embedded == 0


def test_material_blog_at_the_site_root_with_slug_urls(tmp_path):
    """evaluationcontext-blog: Material's blog at the site root (blog_dir: .), post URLs from
    front matter slugs, dates as {created, updated}, CRLF sources, and a theme override that
    puts each post's description inside the article (cut with one more selector).

    Zensical 0.0.70 stops on this site ("post links must be a list"), so MkDocs builds it."""
    from evals.sites import SITES, build

    corpus = SITES["evaluationcontext-blog"].config_file
    cache = tmp_path / "cache"
    plugin_site = build(SITES["evaluationcontext-blog"], tmp_path / "plugin-site",
                        cache_dir=str(cache), chat=False)
    plugin, _ = load_artifact(plugin_site)
    site = plain_build(corpus, tmp_path / "site")
    rule = ContentRule(THEMES.selectors, (*THEMES.cut, *parse_selectors(".md-post-header")))
    result = compile_built_site(site, corpus, rule, EmbeddingCache(Encoder(), cache))
    assert result is not None and result.warnings == []
    artifact, _ = load_artifact(site)
    assert differences(plugin, artifact) == []
    assert result.report.embedded == 0
    urls = {s["path"]: s["url"] for s in artifact["sources"]}
    assert urls["posts/2024/2024-04-27-TrashCompactor/TrashCompactor.md"] == "posts/Trash-Compactor/"
    assert "index.md" not in urls, "the blog's index lists excerpts only"


def _plain_theme_site(root: Path, theme: str) -> Path:
    docs = root / "docs"
    (docs / "drafts").mkdir(parents=True)
    pages = {
        "index.md": "# Home\n\nThe tram clock shows arrivals.\n",
        "guide.md": "---\ndescription: Setting it up\n---\n# Guide\n\n## Setup\n\nRun the "
                    "installer, then restart.\n",
        "README.md": "# Readme\n\nShadowed by index.md, as MkDocs does.\n",
        "no-title.md": "Plain text with no heading, titled from its file name.\n",
        "private.md": "---\nsite_knowledge: false\n---\n# Private\n\nZEBRA-99\n",
        "quiet.md": "---\nsite_knowledge: {chat: false}\n---\n# Quiet\n\nIndexed, no box.\n",
        "unindexed.md": "---\nsite_knowledge: {index: false}\n---\n# Hidden\n\nHERON-31\n",
        "wip.md": "---\ndraft: true\n---\n# Work in progress\n\nPELICAN-12\n",
        "drafts/notes.md": "# Notes\n\nIBIS-77\n",
    }
    for name, text in pages.items():
        (docs / name).write_text(text, encoding="utf-8")
    config_file = root / "mkdocs.yml"
    config_file.write_text(
        "site_name: Plain\nsite_url: https://plain.example.org/\n"
        f"theme:\n  name: {theme}\n  highlightjs: false\n"
        "use_directory_urls: false\nnav:\n  - Start: index.md\n  - guide.md\n"
        "draft_docs: |\n  drafts/\nplugins:\n  - search\n  - site-knowledge:\n"
        "      gateways: [http://127.0.0.1:8787]\n",
        encoding="utf-8")
    return config_file


@pytest.mark.parametrize("theme", ["mkdocs", "readthedocs"])
def test_mkdocs_themes_opt_outs_and_file_urls(tmp_path, theme):
    config_file = _plain_theme_site(tmp_path / "src", theme)
    cache = tmp_path / "cache"
    plugin = build_site(config_file, tmp_path / "plugin-site", cache_dir=str(cache))
    site = plain_build(without_plugin(config_file), tmp_path / "site", serve=True)
    result = compile_site(site, config_file, cache)
    artifact, _ = load_artifact(site)
    assert differences(plugin.artifact, artifact) == []
    assert result.report.embedded == 0
    assert result.warnings == ["gateway http://127.0.0.1:8787 is on the visitor's own machine, "
                               "but site_url https://plain.example.org/ is public: deployed pages "
                               "would send each question to the visitor's computer. Name your "
                               "public gateway (gateways, or SITE_KNOWLEDGE_GATEWAY with `!ENV`), "
                               "or none to use the browser engines."]
    text = (site / OUTPUT / "site-knowledge.json").read_text(encoding="utf-8")
    assert not any(word in text for word in ("ZEBRA-99", "HERON-31", "PELICAN-12", "IBIS-77"))
    titles = {s["path"]: s["title"] for s in artifact["sources"]}
    assert titles == {"index.md": "Start", "guide.md": "Guide", "no-title.md": "No title",
                      "quiet.md": "Quiet"}
    urls = {s["path"]: s["url"] for s in artifact["sources"]}
    assert urls["guide.md"] == "guide.html" and urls["index.md"] == "index.html"
    boxes = pages_with_launcher(site)
    assert "quiet.html" not in boxes and "private.html" not in boxes
    assert {"index.html", "guide.html", "unindexed.html", "wip.html"} <= boxes.keys()
    # The plugin's build never rendered drafts/notes.md; `mkdocs serve` did, and the plugin
    # would have given it the box there too.
    assert boxes.keys() - {"drafts/notes.html"} == pages_with_launcher(tmp_path / "plugin-site").keys()


@pytest.mark.parametrize("case", ["missing", "empty", "sources", "other-site"])
def test_refuses_what_is_not_this_sites_build(tmp_path, case):
    config_file = copy_example(tmp_path / "src")
    folder = {"missing": tmp_path / "nowhere", "empty": tmp_path / "empty",
              "sources": tmp_path / "src" / "docs", "other-site": tmp_path / "other"}[case]
    if case == "empty":
        folder.mkdir()
    if case == "other-site":
        (folder / "about").mkdir(parents=True)
        (folder / "about" / "index.html").write_text("<html><body>x</body></html>", "utf-8")
    message = {"missing": "no such folder", "empty": "no HTML pages: not a built site",
               "sources": "no HTML pages: not a built site",
               "other-site": "none of its 1 HTML pages is built from the config's docs_dir"}[case]
    with pytest.raises(BuildError, match=re.escape(message)):
        compile_built_site(folder, config_file)
    assert not (folder / OUTPUT).exists()


def test_command_line_names_the_problem_and_exits_1(tmp_path):
    config_file = copy_example(tmp_path / "src")
    done = subprocess.run(
        [sys.executable, "-m", "site_knowledge.cli", "compile", str(tmp_path / "src" / "docs"),
         "-f", str(config_file)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1
    assert re.search(r"^site-knowledge compile: .*docs: no HTML pages: not a built site",
                     done.stderr, re.M), done.stderr
