"""Rendered page HTML to a stream of headings and text blocks, the way a visitor reads it."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser

HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
BLOCK_TAGS = {
    "p", "li", "pre", "tr", "dt", "dd", "blockquote", "figcaption", "summary", "caption",
    "div", "section", "article", "table", "ul", "ol", "dl", "details", "hr", "br",
}
SKIPPED_TAGS = {"script", "style", "template", "svg", "noscript", "button"}
CELL_TAGS = {"td", "th"}
SPACES = re.compile(r"[ \t\r\f\v]+")


@dataclass(frozen=True)
class Heading:
    """A heading with its level and MkDocs' own toc id."""

    level: int
    text: str
    anchor: str


@dataclass(frozen=True)
class Block:
    """A paragraph, list item, table row or code block; ``code`` keeps its line breaks."""

    text: str
    code: bool = False


class _BlockParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.items: list[Heading | Block] = []
        self._buffer: list[str] = []
        self._skip_depth = 0
        self._pre_depth = 0
        self._heading: tuple[int, str] | None = None
        self._row_cells: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        css = attributes.get("class") or ""
        if tag in SKIPPED_TAGS or (tag == "a" and "headerlink" in css):
            self._skip_depth += 1
            return
        if self._skip_depth:
            return
        if tag in HEADING_TAGS:
            self._flush()
            self._heading = (HEADING_TAGS[tag], attributes.get("id") or "")
        elif tag == "pre":
            self._flush()
            self._pre_depth += 1
        elif tag == "tr":
            self._flush()
            self._row_cells = []
        elif tag in CELL_TAGS and self._row_cells is not None:
            self._buffer = []
        elif tag in BLOCK_TAGS and not self._pre_depth:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED_TAGS or (tag == "a" and self._skip_depth):
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if self._skip_depth:
            return
        if tag in HEADING_TAGS and self._heading is not None:
            level, anchor = self._heading
            text = _clean("".join(self._buffer))
            self._buffer = []
            self._heading = None
            if text:
                self.items.append(Heading(level, text, anchor))
        elif tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)
            code = "".join(self._buffer).strip("\n")
            self._buffer = []
            if code.strip():
                self.items.append(Block(code, code=True))
        elif tag in CELL_TAGS and self._row_cells is not None:
            self._row_cells.append(_clean("".join(self._buffer)))
            self._buffer = []
        elif tag == "tr" and self._row_cells is not None:
            cells = [cell for cell in self._row_cells if cell]
            self._row_cells = None
            if cells:
                self.items.append(Block(" | ".join(cells)))
        elif tag in BLOCK_TAGS and not self._pre_depth:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self._buffer.append(data)

    def _flush(self) -> None:
        if self._heading is not None or self._row_cells is not None:
            return
        text = _clean("".join(self._buffer))
        self._buffer = []
        if text:
            self.items.append(Block(text))

    def close(self) -> None:
        super().close()
        self._heading = None
        self._row_cells = None
        self._flush()


def _clean(text: str) -> str:
    lines = (SPACES.sub(" ", line).strip() for line in html.unescape(text).split("\n"))
    return " ".join(line for line in lines if line)


def html_blocks(page_html: str) -> list[Heading | Block]:
    """Split rendered HTML into headings and text blocks, in reading order.

    Scripts, styles, SVG and MkDocs' permalink anchors are dropped; table rows become one
    block each (cells joined by `` | ``); ``<pre>`` keeps its lines.
    """
    parser = _BlockParser()
    parser.feed(page_html)
    parser.close()
    return parser.items
