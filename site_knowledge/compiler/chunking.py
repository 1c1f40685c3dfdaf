"""Sources to passages: block-aware packing into at most 900 characters."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from site_knowledge.compiler.html_blocks import Block, Heading, html_blocks
from site_knowledge.compiler.model import MAX_PASSAGE_CHARS, Passage, Section, Source

BLOCK_SEPARATOR = "\n\n"
SMALL_SECTION_CHARS = 300
SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


def page_sections(page_html: str, title: str) -> tuple[Section, ...]:
    """Group a rendered page's blocks under their heading path and MkDocs anchor.

    The page title (usually the ``h1``) is not repeated in heading paths; text before the
    first heading belongs to a section with an empty heading and no anchor.
    """
    sections: list[Section] = []
    path: list[Heading] = []
    blocks: list[str] = []

    def close_section() -> None:
        if blocks:
            heading = " > ".join(h.text for h in path if not (h.level == 1 and h.text == title))
            anchor = path[-1].anchor if path else ""
            sections.append(Section(heading, BLOCK_SEPARATOR.join(blocks), anchor))
        blocks.clear()

    for item in html_blocks(page_html):
        if isinstance(item, Heading):
            close_section()
            path = [h for h in path if h.level < item.level] + [item]
        elif isinstance(item, Block):
            blocks.append(item.text)
    close_section()
    return tuple(sections)


def merge_small_sections(sections: Sequence[Section], limit: int = MAX_PASSAGE_CHARS,
                         small: int = SMALL_SECTION_CHARS) -> tuple[Section, ...]:
    """Fold a short section into the one before it when both fit one passage.

    The folded section's heading becomes a block of the text, so its words still count;
    the passage keeps the first section's heading path and anchor.
    """
    merged: list[Section] = []
    for section in sections:
        if merged and len(section.text) < small:
            previous = merged[-1]
            leaf = section.heading.split(" > ")[-1]
            text = BLOCK_SEPARATOR.join(part for part in (previous.text, leaf, section.text) if part)
            if len(text) <= limit:
                merged[-1] = Section(previous.heading, text, previous.anchor)
                continue
        merged.append(section)
    return tuple(merged)


def source_passages(source: Source, limit: int = MAX_PASSAGE_CHARS) -> list[Passage]:
    """Cut every section of a source into passages of at most ``limit`` characters.

    Blocks are packed whole; a block over the limit is cut between lines (code), then
    sentences, then words, and only a single word longer than the limit is cut inside.
    """
    passages: list[Passage] = []
    for section in source.sections:
        url = f"{source.url}#{section.anchor}" if section.anchor else source.url
        for text in pack(section.text.split(BLOCK_SEPARATOR), limit):
            passage_id = f"{source.id}#{len(passages)}"
            passages.append(Passage(passage_id, source.id, section.heading, text, url))
    return passages


def pack(blocks: Iterable[str], limit: int) -> Iterator[str]:
    """Greedily join pieces with blank lines into chunks of at most ``limit`` characters."""
    pieces = (piece for block in blocks for piece in _fit(block.strip(), limit))
    return _greedy_join(pieces, BLOCK_SEPARATOR, limit)


def _greedy_join(pieces: Iterable[str], separator: str, limit: int) -> Iterator[str]:
    current = ""
    for piece in pieces:
        joined = f"{current}{separator}{piece}" if current else piece
        if len(joined) <= limit:
            current = joined
            continue
        if current:
            yield current
        current = piece
    if current:
        yield current


def _fit(block: str, limit: int) -> Iterator[str]:
    if len(block) <= limit:
        if block:
            yield block
        return
    separator, parts = ("\n", block.split("\n")) if "\n" in block else (" ", [])
    if not parts:
        sentences = SENTENCE_END.split(block)
        parts = sentences if len(sentences) > 1 else block.split(" ")
    pieces = (piece for part in parts for piece in _hard_cut(part, limit))
    yield from _greedy_join(pieces, separator, limit)


def _hard_cut(part: str, limit: int) -> Iterator[str]:
    if len(part) <= limit:
        yield part
        return
    if " " in part.strip():
        yield from _fit(part.strip(), limit)
        return
    for start in range(0, len(part), limit):
        yield part[start : start + limit]
