"""Which pages are published, read from their sources: shared by the plugin and compile.

A page is left out of the artifact when MkDocs excludes it (``exclude_docs``, ``draft_docs``,
a blog's draft posts: the adapters ask their generator's structure for that), when its front
matter says ``draft: true``, or when it opts out with ``site_knowledge: false`` (or a mapping
``{index: false}`` / ``{chat: false}`` that picks one of the two). The same mapping may mark a
page's ``authority`` (``fiction`` for jokes and what-ifs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

import yaml
from mkdocs.utils.meta import YAML_RE, get_data

from site_knowledge.compiler.compiler import PageInput
from site_knowledge.compiler.languages import TAG, language_tag
from site_knowledge.compiler.model import Authority, BuildError
from site_knowledge.compiler.ontology import AUTHORITIES

OPT_OUT_KEY = "site_knowledge"
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it (about 7 times faster on front matter)."""


def read_page_source(raw: bytes, where: str) -> tuple[str, dict[str, Any]]:
    """A page's Markdown and front matter, as MkDocs reads them (text mode: any line ending
    becomes ``\\n``), or a clear error (`check_page_source`).

    Args:
        raw: the source file's bytes.
        where: the file's docs-relative path, for errors.

    Returns:
        The Markdown after the front matter, and the front matter (empty when there is none).

    Raises:
        BuildError: bytes that are not UTF-8, front matter that is not YAML or not a mapping.
    """
    text, front = check_page_source(raw, where)
    if front is None:
        return get_data(text)
    if front.data is None:
        return text, {}
    return text[front.end:].lstrip("\n"), front.data


@dataclass(frozen=True)
class FrontMatter:
    """A page's YAML front matter: what it holds (None when it is empty) and where the
    Markdown starts."""

    data: dict[str, Any] | None
    end: int


def check_page_source(raw: bytes, where: str) -> tuple[str, FrontMatter | None]:
    """A page's text, and its YAML front matter if it opens with one, or a clear error.

    MkDocs silently publishes bad front matter as text; here it fails, naming the file.

    Raises:
        BuildError: bytes that are not UTF-8, front matter that is not YAML or not a mapping.
    """
    try:
        text = raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise BuildError(where, f"not UTF-8 (byte {error.start}, line {line})") from None
    match = YAML_RE.match(text)
    if match is None:
        return text, None
    try:
        data = yaml.load(match.group(1), Loader=SAFE_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise BuildError(where, f"malformed front matter{at}: {problem}") from None
    if data is not None and not isinstance(data, dict):
        raise BuildError(where, "front matter is not a mapping")
    return text, FrontMatter(data, match.end())


def is_draft(meta: Mapping[str, Any]) -> bool:
    """Front matter ``draft: true`` (Material's and Zensical's blog drafts, any page)."""
    return meta.get("draft") is True


def page_authority(meta: Mapping[str, Any], where: str) -> Authority:
    """Front matter ``site_knowledge: {authority: fiction}`` (or ``fact``) for a page; every
    other page is ``prose``. Fiction is cited when drawn on but never supports a claim."""
    setting = meta.get(OPT_OUT_KEY)
    value = setting.get("authority", "prose") if isinstance(setting, dict) else "prose"
    if value not in AUTHORITIES:
        raise BuildError(where, f"site_knowledge.authority is {value!r}; expected one of "
                                f"{', '.join(AUTHORITIES)}")
    return cast(Authority, value)


def page_opt_out(meta: Mapping[str, Any], part: Literal["index", "chat"]) -> bool:
    """Front matter ``site_knowledge: false`` opts a page out of both; a mapping picks one."""
    setting = meta.get(OPT_OUT_KEY, True)
    if isinstance(setting, dict):
        return setting.get(part, True) is False
    return setting is False


def theme_language(theme: Mapping[str, Any]) -> str:
    """The theme's language (Material's ``language``, MkDocs' ``locale``) as a language tag, ""
    when it sets none that is one."""
    tag = str(theme.get("language") or theme.get("locale") or "").lower().replace("_", "-")
    return tag if TAG.match(tag) else ""


def page_input(src_path: str, url: str, title: str, meta: Mapping[str, Any], html: str) -> PageInput:
    """A published page as the compiler takes it, with what its front matter says (description,
    authority, lang): one place for both adapters, so a page gets the same source either way."""
    lang = language_tag(meta["lang"], src_path) if meta.get("lang") is not None else ""
    return PageInput(src_path=src_path, url=url, title=title,
                     description=str(meta.get("description") or ""), html=html,
                     authority=page_authority(meta, src_path), lang=lang)
