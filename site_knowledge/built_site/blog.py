"""Material's and Zensical's blog: which sources are posts, their built URLs, their drafts.

The rules are the blog plugin's documented ones (``blog_dir``, ``post_dir``,
``post_url_format`` with ``{date}``, ``{slug}``, ``{categories}`` and ``{file}``,
``post_url_date_format``, ``post_slugify``, ``draft``, ``draft_if_future_date``), applied to a
post's front matter; the URL itself comes from MkDocs' own file rules.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any

from site_knowledge.compiler.model import BuildError

Slugify = Callable[[str, str], str]
LDML_TOKEN = re.compile(r"'[^']*'|([A-Za-z])\1*|[^A-Za-z']+")


@dataclass(frozen=True)
class BlogSettings:
    """One blog plugin instance's settings that decide post URLs and drafts."""

    blog_dir: str = "blog"
    post_dir: str = "{blog}/posts"
    post_url_format: str = "{date}/{slug}"
    post_url_date_format: str = "yyyy/MM/dd"
    post_url_max_categories: int = 1
    post_slugify: Slugify | None = None
    post_slugify_separator: str = "-"
    categories_slugify: Slugify | None = None
    categories_slugify_separator: str = "-"
    draft: bool = False
    draft_if_future_date: bool = False

    @property
    def index(self) -> str:
        """The blog's entry page, a listing of post excerpts."""
        return posixpath.normpath(posixpath.join(self.blog_dir, "index.md"))

    def is_post(self, src_uri: str) -> bool:
        """Whether a source is one of this blog's posts (a prefix test, as the plugin's)."""
        prefix = posixpath.normpath(self.post_dir.format(blog=self.blog_dir))
        return src_uri.startswith(prefix) and src_uri != self.index


def blog_settings(raw: Mapping[str, Any], where: str,
                  resolve: Callable[[object], object]) -> BlogSettings:
    """A blog plugin entry's settings, with the plugin's defaults for what it leaves out.

    Args:
        raw: the entry's options from ``mkdocs.yml``.
        where: the config file, for errors.
        resolve: turns a ``!!python/...`` value into the object it names.
    """
    defaults = BlogSettings()
    values: dict[str, Any] = {}
    for name, default in vars(defaults).items():
        if name not in raw:
            continue
        value = raw[name]
        if name in ("post_slugify", "categories_slugify"):
            value = _slugify_option(name, resolve(value), where)
        elif default is not None and not isinstance(value, type(default)):
            raise BuildError(where, f"plugins.blog.{name}: expected {type(default).__name__}, "
                                    f"got {value!r}")
        values[name] = value
    return BlogSettings(**values)


def _slugify_option(name: str, value: object, where: str) -> Slugify:
    if not callable(value):
        raise BuildError(where, f"plugins.blog.{name}: {value!r} is not a function")
    slugify: Slugify = value
    return slugify


def _default_slugify(where: str) -> Slugify:
    try:
        from pymdownx.slugs import slugify
    except ImportError:
        raise BuildError(where, "blog post URLs need pymdown-extensions (Material and Zensical "
                                "install it)") from None
    default: Slugify = slugify(case="lower")
    return default


def created(meta: Mapping[str, Any], where: str) -> datetime:
    """A post's creation date from ``date:`` (a date, a datetime or ``{created: ...}``), in UTC
    when no zone is given, as the blog plugin reads it."""
    value = meta.get("date")
    if isinstance(value, dict):
        value = value.get("created")
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=UTC)
    raise BuildError(where, f"blog post without a valid date (date: {value!r})")


def is_draft_post(blog: BlogSettings, meta: Mapping[str, Any], where: str,
                  now: datetime) -> bool:
    """Whether the blog plugin leaves the post out of a build (it renders it when ``draft``)."""
    if blog.draft:
        return False
    draft = meta.get("draft")
    if not isinstance(draft, bool) and blog.draft_if_future_date:
        return created(meta, where) > now
    return bool(draft)


def url_date(moment: datetime, pattern: str, where: str) -> str:
    """``post_url_date_format`` applied: the numeric LDML fields ``y``, ``M`` and ``d``."""
    fields = {"y": moment.year, "M": moment.month, "d": moment.day}
    out = []
    for match in LDML_TOKEN.finditer(pattern):
        token = match.group(0)
        letter = match.group(1)
        if token.startswith("'"):
            out.append(token[1:-1] or "'")
        elif letter is None:
            out.append(token)
        elif letter in fields and (letter == "y" or len(token) <= 2):
            number = fields[letter] % 100 if token == "yy" else fields[letter]
            out.append(f"{number:0{len(token)}d}")
        else:
            raise BuildError(where, f"plugins.blog.post_url_date_format {pattern!r}: {token!r} "
                                    "is not supported here (use y, M and d fields)")
    return "".join(out)


def post_path(blog: BlogSettings, src_uri: str, name: str, title: str,
              meta: Mapping[str, Any], where: str) -> str:
    """The docs-relative ``.md`` path the blog gives a post, e.g. ``blog/2024/03/09/slug.md``.

    Args:
        blog: the blog the post belongs to.
        src_uri: the post's source path.
        name: MkDocs' file name of the source (its stem).
        title: the post's title as the blog sees it before rendering.
        meta: the post's front matter.
        where: the config file, for errors.
    """
    slugify = blog.post_slugify or _default_slugify(where)
    category_slugify = blog.categories_slugify or _default_slugify(where)
    categories = [category_slugify(str(c), blog.categories_slugify_separator)
                  for c in (meta.get("categories") or [])[: blog.post_url_max_categories]]
    path = blog.post_url_format.format(
        categories="/".join(categories),
        date=url_date(created(meta, src_uri), blog.post_url_date_format, where),
        file=name,
        slug=meta.get("slug") or slugify(title, blog.post_slugify_separator),
    )
    return posixpath.normpath(posixpath.join(blog.blog_dir, f"{path.strip('/')}.md"))
