"""Each page's language: its front matter's ``lang``, its top folder on a site laid out one folder
per language (``docs/<lang>/...``, as mkdocs-static-i18n lays it out), else the theme's."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from site_knowledge.compiler.model import BuildError

TAG = re.compile(r"^[a-z]{2}(?:-[a-z0-9]{2,8})*$")
"""A language tag as the artifact stores it: lower case, ``-`` between subtags."""
ISO_639_1 = frozenset((
    "aa", "ab", "ae", "af", "ak", "am", "an", "ar", "as", "av", "ay", "az", "ba", "be", "bg",
    "bh", "bi", "bm", "bn", "bo", "br", "bs", "ca", "ce", "ch", "co", "cr", "cs", "cu", "cv",
    "cy", "da", "de", "dv", "dz", "ee", "el", "en", "eo", "es", "et", "eu", "fa", "ff", "fi",
    "fj", "fo", "fr", "fy", "ga", "gd", "gl", "gn", "gu", "gv", "ha", "he", "hi", "ho", "hr",
    "ht", "hu", "hy", "hz", "ia", "id", "ie", "ig", "ii", "ik", "io", "is", "it", "iu", "ja",
    "jv", "ka", "kg", "ki", "kj", "kk", "kl", "km", "kn", "ko", "kr", "ks", "ku", "kv", "kw",
    "ky", "la", "lb", "lg", "li", "ln", "lo", "lt", "lu", "lv", "mg", "mh", "mi", "mk", "ml",
    "mn", "mr", "ms", "mt", "my", "na", "nb", "nd", "ne", "ng", "nl", "nn", "no", "nr", "nv",
    "ny", "oc", "oj", "om", "or", "os", "pa", "pi", "pl", "ps", "pt", "qu", "rm", "rn", "ro",
    "ru", "rw", "sa", "sc", "sd", "se", "sg", "si", "sk", "sl", "sm", "sn", "so", "sq", "sr",
    "ss", "st", "su", "sv", "sw", "ta", "te", "tg", "th", "ti", "tk", "tl", "tn", "to", "tr",
    "ts", "tt", "tw", "ty", "ug", "uk", "ur", "uz", "ve", "vi", "vo", "wa", "wo", "xh", "yi",
    "yo", "za", "zh", "zu",
))
"""Primary subtags a top folder may hold: ``docs/en/`` is a language, ``docs/api/`` is not."""


def language_tag(value: object, where: str) -> str:
    """A declared language as the artifact stores it (``pt_BR`` -> ``pt-br``).

    Raises:
        BuildError: naming ``where``, when the value is not a language tag.
    """
    tag = str(value).strip().lower().replace("_", "-") if isinstance(value, str) else ""
    if not TAG.match(tag):
        raise BuildError(where, f"lang {value!r} is not a language tag such as 'en' or 'zh-hant'")
    return tag


def folder_language(src_path: str) -> str | None:
    """The language a page's top folder names (``zh-hant/index.md`` -> ``zh-hant``), or None."""
    top, separator, _ = src_path.replace("\\", "/").partition("/")
    tag = top.lower().replace("_", "-")
    if separator and TAG.match(tag) and tag.split("-")[0] in ISO_639_1:
        return tag
    return None


def page_languages(src_paths: Sequence[str], declared: Sequence[str], default: str) -> list[str]:
    """Each page's language: declared (front matter), else its top folder when two or more top
    folders name languages (one folder per language), else ``default`` ("" when unknown)."""
    folders = [folder_language(path) for path in src_paths]
    by_folder = len({tag for tag in folders if tag}) >= 2
    return [lang or (folder if by_folder and folder else default)
            for lang, folder in zip(declared, folders, strict=True)]


def main_language(languages: Sequence[str]) -> str:
    """The language most sources have (ties: the first seen), "" for none: the site's ``lang``,
    which sources in it leave out."""
    counts = Counter(languages)
    return max(counts, key=lambda tag: (counts[tag], -languages.index(tag))) if counts else ""
