"""Blog posts: their URLs from the blog plugin's settings, and which are drafts."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from site_knowledge.built_site.blog import (
    BlogSettings,
    blog_settings,
    created,
    is_draft_post,
    post_path,
    url_date,
)
from site_knowledge.built_site.config import PythonTag
from site_knowledge.compiler.model import BuildError

NOW = datetime(2026, 1, 1, tzinfo=UTC)
META = {"date": date(2024, 3, 9), "categories": ["Site Reliability", "Career"]}


def settings(**raw: object) -> BlogSettings:
    return blog_settings(raw, "mkdocs.yml", lambda v: v.resolve() if isinstance(v, PythonTag) else v)


@pytest.mark.parametrize(("raw", "meta", "expected"), [
    ({}, META, "blog/2024/03/09/what-ten-years-taught-me.md"),
    ({"post_url_format": "{slug}", "blog_dir": "."}, {**META, "slug": "posts/On-Call"},
     "posts/On-Call.md"),
    ({"post_url_format": "{categories}/{file}"}, META, "blog/site-reliability/on-call-decade.md"),
    ({"post_url_format": "{date}/{slug}", "post_url_date_format": "yyyy/M"}, META,
     "blog/2024/3/what-ten-years-taught-me.md"),
    ({"post_slugify_separator": "_", "blog_dir": "news"}, META,
     "news/2024/03/09/what_ten_years_taught_me.md"),
    ({"post_slugify": PythonTag("object/apply:pymdownx.slugs.slugify", {"kwds": {"case": "none"}})},
     META, "blog/2024/03/09/What-ten-years-taught-me.md"),
])
def test_post_paths(raw, meta, expected) -> None:
    blog = settings(**raw)
    path = post_path(blog, "blog/posts/on-call-decade.md", "on-call-decade",
                     "What ten years taught me", meta, "mkdocs.yml")
    assert path == expected


def test_date_forms_and_url_fields() -> None:
    assert created({"date": {"created": date(2024, 1, 2)}}, "p.md") == datetime(2024, 1, 2, tzinfo=UTC)
    assert created({"date": datetime(2024, 1, 2, 23, 30)}, "p.md").tzinfo is UTC
    moment = datetime(2009, 7, 4, tzinfo=UTC)
    assert url_date(moment, "yyyy/MM/dd", "m") == "2009/07/04"
    assert url_date(moment, "yy-M-d 'at' y", "m") == "09-7-4 at 2009"
    with pytest.raises(BuildError, match=r"post_url_date_format 'long'"):
        url_date(moment, "long", "mkdocs.yml")
    with pytest.raises(BuildError, match=r"^p\.md: blog post without a valid date"):
        created({"title": "no date"}, "p.md")


@pytest.mark.parametrize(("raw", "meta", "draft"), [
    ({}, {"date": date(2030, 1, 1)}, False),
    ({}, {"date": date(2020, 1, 1), "draft": True}, True),
    ({"draft_if_future_date": True}, {"date": date(2030, 1, 1)}, True),
    ({"draft_if_future_date": True}, {"date": date(2030, 1, 1), "draft": False}, False),
    ({"draft_if_future_date": True}, {"date": date(2020, 1, 1)}, False),
    ({"draft": True}, {"date": date(2020, 1, 1), "draft": True}, False),
])
def test_drafts_as_the_blog_plugin_decides(raw, meta, draft) -> None:
    assert is_draft_post(settings(**raw), meta, "p.md", NOW) is draft


def test_posts_are_under_post_dir_and_the_index_is_a_listing() -> None:
    blog = settings(blog_dir=".")
    assert blog.index == "index.md"
    assert blog.is_post("posts/2024/x.md") and not blog.is_post("about.md")
    assert settings().is_post("blog/posts/a.md") and not settings().is_post("blog/index.md")


def test_bad_settings_name_the_option() -> None:
    with pytest.raises(BuildError, match=r"mkdocs\.yml: plugins\.blog\.post_url_format: expected str"):
        settings(post_url_format=3)
    with pytest.raises(BuildError, match=r"plugins\.blog\.post_slugify: .* is not a function"):
        settings(post_slugify="slugify")
