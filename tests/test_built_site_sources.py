"""Each source page mapped to its built page through the config, drafts marked as the plugin does."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sites import EXAMPLE, copy_example

from site_knowledge.built_site.config import load_site_config
from site_knowledge.built_site.sources import SiteSources, site_sources
from site_knowledge.compiler.model import BuildError

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def sources_of(config_file: Path) -> SiteSources:
    return site_sources(load_site_config(config_file, config_file.parent / "site"), NOW)


def test_example_site_pages_posts_listing_and_drafts() -> None:
    by_src = {page.src_uri: page for page in sources_of(EXAMPLE / "mkdocs.yml").pages}
    home, cv = by_src["index.md"], by_src["cv.md"]
    assert (home.url, home.built_path, home.title("Hi, I'm Teo")) == ("", "index.html", "Home")
    assert (cv.url, cv.built_path, cv.title("Curriculum vitae")) == ("cv/", "cv/index.html", "CV")
    post = by_src["blog/posts/on-call-decade.md"]
    assert (post.role, post.url) == ("post", "blog/2024/03/09/on-call-decade/")
    assert post.built_path == "blog/2024/03/09/on-call-decade/index.html"
    assert "title" not in post.meta and post.title("Rendered h1") == "Rendered h1"
    assert post.title(None) == "On call decade", "MkDocs' title from the file name"
    assert by_src["blog/index.md"].role == "listing"
    drafts = {src for src, page in by_src.items() if page.excluded}
    assert drafts == {"drafts/salary-notes.md", "blog/posts/draft-graz-house.md",
                      "blog/posts/draft-next-platform.md"}
    assert "_snippets/availability.md" not in by_src, "exclude_docs files are not pages"


def test_file_urls_and_a_future_post(tmp_path) -> None:
    config_file = copy_example(tmp_path / "src")
    text = config_file.read_text(encoding="utf-8")
    text = text.replace("      post_excerpt: optional\n",
                        "      post_excerpt: optional\n      draft_if_future_date: true\n")
    config_file.write_text(text + "\nuse_directory_urls: false\n", encoding="utf-8")
    post = tmp_path / "src" / "docs" / "blog" / "posts" / "tram-clock.md"
    post.write_text(post.read_text(encoding="utf-8").replace("date: 2021-04-10", "date: 2031-04-10"),
                    encoding="utf-8")
    by_src = {page.src_uri: page for page in sources_of(config_file).pages}
    assert (by_src["index.md"].url, by_src["cv.md"].url) == ("index.html", "cv.html")
    assert by_src["blog/posts/on-call-decade.md"].built_path == "blog/2024/03/09/on-call-decade.html"
    assert by_src["blog/posts/tram-clock.md"].excluded, "a future post is a draft here"
    assert not by_src["blog/posts/on-call-decade.md"].excluded


def test_a_bad_source_names_the_file(tmp_path) -> None:
    config_file = copy_example(tmp_path / "src")
    (tmp_path / "src" / "docs" / "broken.md").write_text("---\ntitle: [x\n---\n# B\n", "utf-8")
    with pytest.raises(BuildError, match=r"^broken\.md: malformed front matter"):
        sources_of(config_file)
