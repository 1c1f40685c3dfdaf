"""A built page's main content: the HTML the generator rendered from the Markdown source.

Selectors are simple CSS: a tag, classes, an id and attributes (``article.md-content__inner``,
``div[role=main]``, ``#content``), tried in order; the first that matches an element wins.
Inside it, the theme's own additions (Material's and Zensical's edit buttons, tags, dates,
feedback and comments) are cut out, so what remains is what the plugin sees as page content.
"""

from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import dataclass
from html.parser import HTMLParser

from site_knowledge.compiler.html_blocks import Heading, html_blocks

# Material and Zensical (their article), then MkDocs' and Read the Docs' themes.
DEFAULT_SELECTORS = "article.md-content__inner, div[role=main]"
THEME_ADDITIONS = (".md-content__button, .md-tags, .md-source-file, .md-feedback, #__comments, "
                   "#__skip")
VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                       "param", "source", "track", "wbr"})
SIMPLE = re.compile(r"""
    ([a-zA-Z][\w-]*)                       # tag
    | \.([\w-]+)                           # .class
    | \#([\w-]+)                           # #id
    | \[\s*([\w-]+)\s*                     # [attr
      (?:=\s*(?:"([^"]*)"|'([^']*)'|([^\]\s]+)))?\s*\]   # =value]
""", re.VERBOSE)


@dataclass(frozen=True)
class Selector:
    """A compound CSS selector: every part must hold for one element."""

    text: str
    tag: str | None = None
    classes: frozenset[str] = frozenset()
    attributes: tuple[tuple[str, str | None], ...] = ()

    def matches(self, tag: str, attrs: dict[str, str | None], classes: set[str]) -> bool:
        """Whether an element with this tag, attributes and classes is selected."""
        if self.tag is not None and tag != self.tag:
            return False
        if not self.classes <= classes:
            return False
        return all(name in attrs and (value is None or attrs[name] == value)
                   for name, value in self.attributes)


def parse_selectors(text: str) -> tuple[Selector, ...]:
    """Parse a comma-separated list of compound selectors.

    Raises:
        ValueError: naming the part that is not a supported selector.
    """
    selectors = []
    for part in (p.strip() for p in text.split(",")):
        tag: str | None = None
        classes: set[str] = set()
        attributes: list[tuple[str, str | None]] = []
        at = 0
        for match in SIMPLE.finditer(part):
            if match.start() != at:
                break
            at = match.end()
            name, cls, ident, attr = match.group(1), match.group(2), match.group(3), match.group(4)
            if name:
                if tag is not None or classes or attributes:
                    break
                tag = name.lower()
            elif cls:
                classes.add(cls)
            elif ident:
                attributes.append(("id", ident))
            else:
                value = next((v for v in match.group(5, 6, 7) if v is not None), None)
                attributes.append((attr.lower(), value))
        if not part or at != len(part):
            raise ValueError(f"unsupported selector {part!r}: use a tag, .class, #id and "
                             "[attr=value], without spaces")
        selectors.append(Selector(part, tag, frozenset(classes), tuple(attributes)))
    return tuple(selectors)


@dataclass
class _Span:
    """An element's start, the end of its start tag, and the start (or end) of its end tag."""

    tag: str
    depth: int
    start: int
    inner: int
    end: int | None = None


class _Finder(HTMLParser):
    """Finds the first element each wanted selector matches, and every element to cut."""

    def __init__(self, page: str, wanted: tuple[Selector, ...], cut: tuple[Selector, ...]) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.wanted = wanted
        self.cut = cut
        self.found: dict[int, _Span] = {}
        self.cuts: list[_Span] = []
        self._lines = [0] + [m.end() for m in re.finditer("\n", page)]
        self._depth: dict[str, int] = {}
        self._open: list[tuple[_Span, bool]] = []

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._lines[line - 1] + column

    def _span(self, tag: str, depth: int) -> _Span:
        start = self._offset()
        return _Span(tag, depth, start, start + len(self.get_starttag_text() or ""))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_TAGS:
            return
        depth = self._depth[tag] = self._depth.get(tag, 0) + 1
        attributes = dict(attrs)
        classes = set((attributes.get("class") or "").split())
        for index, selector in enumerate(self.wanted):
            if index not in self.found and selector.matches(tag, attributes, classes):
                self.found[index] = self._span(tag, depth)
                self._open.append((self.found[index], False))
        # Cuts matter inside a wanted element only.
        if self._open and any(selector.matches(tag, attributes, classes) for selector in self.cut):
            self.cuts.append(self._span(tag, depth))
            self._open.append((self.cuts[-1], True))

    def handle_endtag(self, tag: str) -> None:
        depth = self._depth.get(tag, 0)
        if not depth:
            return
        self._depth[tag] = depth - 1
        closing = [(s, cut) for s, cut in self._open if s.tag == tag and s.depth == depth]
        if not closing:
            return
        at = self._offset()
        for span, cut in closing:
            span.end = self.page.index(">", at) + 1 if cut else at
            self._open.remove((span, cut))


@dataclass(frozen=True)
class ContentRule:
    """Where a page's main content is, and what inside it the theme added."""

    selectors: tuple[Selector, ...] = parse_selectors(DEFAULT_SELECTORS)
    cut: tuple[Selector, ...] = parse_selectors(THEME_ADDITIONS)


THEMES = ContentRule()


def main_content(page: str, rule: ContentRule) -> str | None:
    """The inner HTML of the first selector's element, less what the rule cuts; or None."""
    finder = _Finder(page, rule.selectors, rule.cut)
    finder.feed(page)
    finder.close()
    span = next((finder.found[i] for i in range(len(rule.selectors))
                 if i in finder.found and finder.found[i].end is not None), None)
    if span is None or span.end is None:
        return None
    pieces, at = [], span.inner
    for cut in sorted(finder.cuts, key=lambda c: c.start):
        if cut.end is not None and at <= cut.start and cut.end <= span.end:
            pieces.append(page[at:cut.start])
            at = cut.end
    pieces.append(page[at:span.end])
    return "".join(pieces)


class _FirstElement(HTMLParser):
    """Stops at the first element, comment or text that is not blank."""

    class Found(Exception):
        pass

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tag: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tag = tag
        raise self.Found

    def handle_comment(self, data: str) -> None:
        raise self.Found

    def handle_data(self, data: str) -> None:
        if data.strip():
            raise self.Found


def rendered_title(content: str) -> str | None:
    """The text of the content's first element when it is an ``h1``: MkDocs' title rule, which
    looks at the first element only (an image or a paragraph before the ``h1`` means none)."""
    first = _FirstElement()
    with suppress(_FirstElement.Found):
        first.feed(content)
    if first.tag != "h1":
        return None
    items = html_blocks(content)
    heading = items[0] if items else None
    return heading.text if isinstance(heading, Heading) and heading.level == 1 else None

