"""The source pages of a ``mkdocs.yml`` site: where a build put each one, and what it may show.

MkDocs' own structure code (``get_files``, ``get_navigation``) gives URLs, built file paths,
nav titles and the ``exclude_docs``/``draft_docs`` inclusion; blog posts get the URL their blog
gives them (``blog.py``). Front matter is read with the plugin's rules (``plugin/pages.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from mkdocs.structure.files import File, get_files
from mkdocs.structure.nav import get_navigation

from site_knowledge.built_site.blog import BlogSettings, is_draft_post, post_path
from site_knowledge.built_site.config import SiteConfig
from site_knowledge.plugin.pages import is_draft, read_page_source

Role = Literal["page", "post", "listing"]


@dataclass(frozen=True)
class SourcePage:
    """One Markdown source and the page a build makes of it.

    Attributes:
        src_uri: the docs-relative source path, e.g. ``blog/posts/slotmeter.md``.
        url: the page's URL as MkDocs gives it (``""`` for the home page).
        built_path: the HTML file under the site folder, e.g. ``cv/index.html``.
        meta: the front matter (empty for a draft that was never read).
        role: ``page``, a blog ``post``, or a blog ``listing`` (excerpts of posts only).
        excluded: a draft or excluded file: never in the artifact.
        nav_title: the title the ``nav`` gives, if any.
        fallback_title: MkDocs' last resort, ``Home`` or one made from the file name.
    """

    src_uri: str
    url: str
    built_path: str
    meta: dict[str, Any]
    role: Role
    excluded: bool
    nav_title: str | None
    fallback_title: str

    def title(self, rendered_h1: str | None) -> str:
        """The title MkDocs gives the page: nav, front matter ``title``, the rendered page's
        first element when it is an ``h1``, then the fallback."""
        if self.nav_title is not None:
            return self.nav_title
        if "title" in self.meta:
            return str(self.meta["title"] or self.fallback_title)
        return rendered_h1 or self.fallback_title


@dataclass(frozen=True)
class SiteSources:
    """Every source page, in MkDocs' build order, and the HTML files copied from docs as is."""

    pages: tuple[SourcePage, ...]
    static_html: frozenset[str]


@contextmanager
def _quiet_mkdocs() -> Iterator[None]:
    """MkDocs' nav notices are about the site's own config, which its build already reported."""
    logger = logging.getLogger("mkdocs")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def site_sources(config: SiteConfig, now: datetime) -> SiteSources:
    """Map every Markdown source of the site to its built page.

    Args:
        config: the site's configuration.
        now: the moment that decides ``draft_if_future_date``.

    Raises:
        BuildError: a source that is not UTF-8 or has bad front matter, or a post without a date.
    """
    mkdocs = config.mkdocs
    with _quiet_mkdocs():
        files = get_files(mkdocs)
        get_navigation(files, mkdocs)
    pages = []
    for file in files.documentation_pages(inclusion=lambda level: level.is_in_serve()):
        blog = next((b for b in config.blogs if b.is_post(file.src_uri)), None)
        pages.append(_source_page(file, config, blog, now))
    static = frozenset(f.dest_uri for f in files.static_pages() if f.dest_uri.endswith(".html"))
    return SiteSources(tuple(pages), static)


def _source_page(file: File, config: SiteConfig, blog: BlogSettings | None,
                 now: datetime) -> SourcePage:
    page = file.page
    if page is None:
        # A draft_docs file (MkDocs gives pages to included files only): built only by
        # `mkdocs serve`, never read, never indexed.
        return SourcePage(file.src_uri, file.url, file.dest_uri, {}, "page", True, None,
                          file.name)
    nav_title = page.title  # before the source is read, only a title the nav gave
    page.markdown, page.meta = "", {}
    fallback = str(page.title)
    markdown, meta = read_page_source(Path(file.abs_src_path or "").read_bytes(), file.src_uri)
    excluded = is_draft(meta)
    if blog is None:
        role: Role = "listing" if any(b.index == file.src_uri for b in config.blogs) else "page"
        return SourcePage(file.src_uri, page.url, file.dest_uri, meta, role, excluded,
                          nav_title, fallback)
    page.markdown, page.meta = markdown, meta
    where = str(config.config_file)
    built = File(post_path(blog, file.src_uri, file.name, str(page.title), meta, where),
                 config.mkdocs.docs_dir, config.mkdocs.site_dir, config.mkdocs.use_directory_urls)
    excluded = excluded or is_draft_post(blog, meta, file.src_uri, now)
    return SourcePage(file.src_uri, built.url, built.dest_uri, meta, "post", excluded, None,
                      fallback)

