"""A built page's main content, by simple CSS selectors, without the theme's additions."""

from __future__ import annotations

import pytest

from site_knowledge.built_site.content import (
    THEMES,
    ContentRule,
    main_content,
    parse_selectors,
    rendered_title,
)

MATERIAL = """<html><body><nav class="md-nav"><a href="/">Home</a></nav>
<div class="md-content"><article class="md-content__inner md-typeset">
<a href="https://example.org/edit/x.md" class="md-content__button md-icon"><svg/></a>
<h1 id="t">Title</h1><p>Body <article>nested</article> text.</p>
<nav class="md-tags"><span class="md-tag">tag-one</span></nav>
<aside class="md-source-file"><span>Last update: 2024</span></aside>
</article></div><footer>Footer</footer></body></html>"""


def test_material_article_without_theme_additions() -> None:
    content = main_content(MATERIAL, THEMES)
    assert content is not None
    assert '<h1 id="t">Title</h1><p>Body <article>nested</article> text.</p>' in content
    for absent in ("md-nav", "Footer", "md-content__button", "tag-one", "Last update"):
        assert absent not in content


def test_mkdocs_theme_role_main_and_void_elements() -> None:
    page = ('<div class="row"><div class="col-md-3">Nav</div><div class="col-md-9" role="main">'
            '<h1 id="a">A</h1><p>x<br>y<img src="i.png"></p><div><p>inner</p></div></div></div>')
    inner = '<h1 id="a">A</h1><p>x<br>y<img src="i.png"></p><div><p>inner</p></div>'
    assert main_content(page, THEMES) == inner


def test_selectors_are_tried_in_order() -> None:
    page = '<main id="m"><p>main</p></main><section class="doc body"><p>section</p></section>'
    assert main_content(page, ContentRule(parse_selectors("section.doc, #m"), ())) == "<p>section</p>"
    assert main_content(page, ContentRule(parse_selectors("#m, section.doc"), ())) == "<p>main</p>"
    assert main_content(page, ContentRule(parse_selectors("[data-x='1']"), ())) is None


@pytest.mark.parametrize(("selector", "tag", "classes", "attributes"), [
    ("article.md-content__inner", "article", {"md-content__inner"}, ()),
    ("div[role=main]", "div", set(), (("role", "main"),)),
    ('[data-kind="doc page"]', None, set(), (("data-kind", "doc page"),)),
    ("#content.a.b", None, {"a", "b"}, (("id", "content"),)),
])
def test_parse_selectors(selector, tag, classes, attributes) -> None:
    (parsed,) = parse_selectors(selector)
    assert (parsed.tag, set(parsed.classes), parsed.attributes) == (tag, classes, attributes)


@pytest.mark.parametrize("selector", ["article p", "div > p", "a:hover", "", "div,"])
def test_unsupported_selectors_are_named(selector) -> None:
    with pytest.raises(ValueError, match="unsupported selector"):
        parse_selectors(selector)


def test_title_is_the_first_element_when_it_is_an_h1() -> None:
    assert rendered_title('\n  <h1 id="x">Hello <code>world</code></h1><p>t</p>') == "Hello world"
    assert rendered_title("<p>intro</p><h1>Later</h1>") is None
    assert rendered_title('<p><img alt="logo" src="l.svg"></p><h1>After a logo</h1>') is None
    assert rendered_title("<!-- note --><h1>After a comment</h1>") is None
    assert rendered_title("<h2>Section</h2>") is None


def test_zensical_skip_anchor_is_cut_so_the_h1_comes_first() -> None:
    page = ('<article class="md-content__inner md-typeset">\n<a id="__skip" tabindex="-1"></a>\n'
            '<h1 id="t">Title</h1><p>Body</p></article>')
    content = main_content(page, THEMES)
    assert content is not None and "__skip" not in content
    assert rendered_title(content) == "Title"
