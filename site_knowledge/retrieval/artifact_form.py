"""The artifact's compact on-disk form (``site-knowledge/2``) and its expansion (SPEC.md, "Files").

On disk each source carries its own passages, and everything a passage shares with its source
or can be derived from it is stored once or not at all: the passage id is ``source#index``,
its URL is the source's URL plus its heading's anchor, heading paths are a small tree per
source, a passage list names a heading only where it changes, an anchor is left out when it
is the heading's default slug, and a page's path, id and description are left out when they
are the defaults derived from its URL and first passage.
:func:`expand` turns that back into the flat source and passage records that readers score;
:func:`compact` is its inverse and refuses a document it could not restore exactly.
``site_knowledge/browser/artifact.js`` is the JavaScript twin of :func:`expand`.
"""

from __future__ import annotations

import re
from typing import Any

SCHEMA_VERSION = "site-knowledge/2"
HEADING_SEPARATOR = " > "
DESCRIPTION_CHARS = 200
NO_HEADING = -1
_NON_ID = re.compile(r"[^a-z0-9]+")
_PRINTABLE_ASCII = re.compile(r"^[ -~]*$")
_SLUG_DROP = re.compile(r"[^\w\s-]", re.ASCII)
_SLUG_JOIN = re.compile(r"[-\s]+", re.ASCII)


class FormError(ValueError):
    """A document that does not follow the compact form (or cannot be written in it)."""


def source_id_for(src_path: str) -> str:
    """A page's source id from its docs-relative path: ``blog/posts/a_b.md`` -> ``blog-posts-a-b``."""
    stem = re.sub(r"\.(md|markdown)$", "", src_path.lower())
    return _NON_ID.sub("-", stem).strip("-") or "index"


def default_path(url: str) -> str:
    """The source file MkDocs renders at a directory URL: ``a/b/`` -> ``a/b.md``, ``""`` -> ``index.md``."""
    return f"{url.rstrip('/')}.md" if url else "index.md"


def heading_slug(leaf: str) -> str | None:
    """Python-Markdown's default anchor for a heading of printable ASCII, else None."""
    if not _PRINTABLE_ASCII.match(leaf):
        return None
    return _SLUG_JOIN.sub("-", _SLUG_DROP.sub("", leaf).strip().lower())


def default_description(passages: list[int | str]) -> str:
    """What a page without a description gets: its first passage's first 200 characters."""
    first = next((item for item in passages if isinstance(item, str)), "")
    return first[:DESCRIPTION_CHARS]


def passage_count(document: dict[str, Any]) -> int:
    """How many passages a compact document holds."""
    return sum(isinstance(item, str) for source in document["sources"] for item in source["passages"])


def expand(document: dict[str, Any]) -> dict[str, Any]:
    """The compact document with flat ``sources`` and ``passages`` lists, as readers score them.

    Sources become ``{id, kind, title, description, url, authority, path, lang}`` and passages
    ``{id, source, heading, text, url}``, in source order; every other field is kept as is.

    Raises:
        FormError: a heading or passage refers to a heading that does not exist.
    """
    sources: list[dict[str, Any]] = []
    passages: list[dict[str, Any]] = []
    site_lang = document.get("site", {}).get("lang", "")
    for source in document["sources"]:
        record = _expand_source(source, site_lang)
        sources.append(record)
        first = len(passages)
        headings = _expand_headings(source["headings"], record["id"])
        heading, anchor = "", ""
        for item in source["passages"]:
            if isinstance(item, int):
                if not NO_HEADING <= item < len(headings):
                    raise FormError(f"source {record['id']}: passages name unknown heading {item}")
                heading, anchor = headings[item] if item != NO_HEADING else ("", "")
                continue
            url = f"{record['url']}#{anchor}" if anchor else record["url"]
            passages.append({"id": f"{record['id']}#{len(passages) - first}", "source": record["id"],
                             "heading": heading, "text": item, "url": url})
    return {**document, "sources": sources, "passages": passages}


def _expand_source(source: dict[str, Any], site_lang: str) -> dict[str, Any]:
    kind = source.get("kind", "page")
    path = source.get("path", default_path(source["url"]) if kind == "page" else None)
    return {
        "id": source["id"] if "id" in source else source_id_for(path or ""),
        "kind": kind,
        "title": source["title"],
        "description": source.get("description", default_description(source["passages"])),
        "url": source["url"],
        "authority": source.get("authority", "prose"),
        "path": path,
        "lang": source.get("lang", site_lang),
    }


def _expand_headings(nodes: list[Any], source_id: str) -> list[tuple[str, str]]:
    """Each node as (heading path, anchor); a node is ``leaf``, ``[parent, leaf]`` or
    ``[parent, leaf, anchor]`` with parent -1 for a top-level heading."""
    out: list[tuple[str, str]] = []
    for index, node in enumerate(nodes):
        parent, leaf, anchor = (NO_HEADING, node, None) if isinstance(node, str) else (
            node[0], node[1], node[2] if len(node) > 2 else None)
        if not NO_HEADING <= parent < index:
            raise FormError(f"source {source_id}: heading {index} names unknown parent {parent}")
        path = f"{out[parent][0]}{HEADING_SEPARATOR}{leaf}" if parent != NO_HEADING else leaf
        if anchor is None:
            anchor = heading_slug(leaf)
            if anchor is None:
                raise FormError(f"source {source_id}: heading {index} needs an explicit anchor")
        out.append((path, anchor))
    return out


def compact(document: dict[str, Any]) -> dict[str, Any]:
    """The compact form of a document with flat ``sources`` and ``passages`` (inverse of expand).

    Raises:
        FormError: the passages are not grouped by source in source order, an id is not
            ``source#index``, or a URL is not its source's URL plus an anchor.
    """
    by_source: dict[str, list[dict[str, Any]]] = {s["id"]: [] for s in document["sources"]}
    position = {source_id: i for i, source_id in enumerate(by_source)}
    last = 0
    for passage in document["passages"]:
        if position.get(passage["source"], -1) < last:
            raise FormError(f"passage {passage['id']}: not grouped under a known source in "
                            "source order")
        last = position[passage["source"]]
        by_source[passage["source"]].append(passage)
    site_lang = document.get("site", {}).get("lang", "")
    sources = [_compact_source(s, by_source[s["id"]], site_lang) for s in document["sources"]]
    result = {k: v for k, v in document.items() if k != "passages"}
    result["sources"] = sources
    return result


def _compact_source(source: dict[str, Any], passages: list[dict[str, Any]],
                    site_lang: str) -> dict[str, Any]:
    tree = _HeadingTree()
    items: list[int | str] = []
    current = NO_HEADING
    for index, passage in enumerate(passages):
        if passage["id"] != f"{source['id']}#{index}":
            raise FormError(f"passage {passage['id']} should be {source['id']}#{index}")
        node = tree.node_for(passage["heading"], _anchor(passage["url"], source["url"]))
        if node != current:
            items.append(node)
            current = node
        items.append(passage["text"])
    out: dict[str, Any] = {}
    if source["kind"] == "page":
        path = source["path"]
        if path != default_path(source["url"]):
            out["path"] = path
        if source["id"] != source_id_for(path or "") or not _PRINTABLE_ASCII.match(path or ""):
            out["id"] = source["id"]
    else:
        out.update(id=source["id"], kind=source["kind"])
        if source["path"] is not None:
            out["path"] = source["path"]
    out["title"] = source["title"]
    if source["description"] != default_description(items):
        out["description"] = source["description"]
    out["url"] = source["url"]
    if source["authority"] != "prose":
        out["authority"] = source["authority"]
    if source.get("lang", site_lang) != site_lang:
        out["lang"] = source["lang"]
    out.update(headings=tree.nodes, passages=items)
    return out


def _anchor(url: str, source_url: str) -> str:
    if url == source_url:
        return ""
    if not url.startswith(f"{source_url}#"):
        raise FormError(f"passage URL {url!r} is not {source_url!r} plus an anchor")
    return url[len(source_url) + 1:]


class _HeadingTree:
    """Heading paths of one source as nodes that name their parent, each stored once."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self._by_path: dict[str, int] = {}
        self._by_section: dict[tuple[str, str], int] = {}

    def node_for(self, heading: str, anchor: str) -> int:
        if not heading and not anchor:
            return NO_HEADING
        if (heading, anchor) in self._by_section:
            return self._by_section[(heading, anchor)]
        parent_path, separator, leaf = heading.rpartition(HEADING_SEPARATOR)
        parent = self._parent(parent_path) if separator else NO_HEADING
        index = self._by_path.get(heading)
        if index is None or self._anchor_of(index) != anchor:
            index = self._add(parent, leaf, anchor)
            self._by_path.setdefault(heading, index)
        self._by_section[(heading, anchor)] = index
        return index

    def _parent(self, path: str) -> int:
        if path in self._by_path:
            return self._by_path[path]
        grand_path, separator, leaf = path.rpartition(HEADING_SEPARATOR)
        grand = self._parent(grand_path) if separator else NO_HEADING
        index = self._add(grand, leaf, None)
        self._by_path[path] = index
        return index

    def _add(self, parent: int, leaf: str, anchor: str | None) -> int:
        slug = heading_slug(leaf)
        if anchor is None or anchor == slug:
            node: Any = [parent, leaf] if parent != NO_HEADING else leaf
            if slug is None:
                node = [parent, leaf, ""]
        else:
            node = [parent, leaf, anchor]
        self.nodes.append(node)
        return len(self.nodes) - 1

    def _anchor_of(self, index: int) -> str:
        node = self.nodes[index]
        if isinstance(node, list) and len(node) > 2:
            return str(node[2])
        leaf = node if isinstance(node, str) else node[1]
        return heading_slug(leaf) or ""
