"""The premise notice and correction: what is said of a question's names that the whole site
never uses (SPEC.md, "Premises"; the names are found by ``retrieval.words.SiteWords``)."""

from __future__ import annotations

from collections.abc import Collection


def notice(terms: Collection[str]) -> str:
    """The line the answer prompt carries when the question uses words the site never does."""
    return "The site never mentions: " + ", ".join(terms) + "." if terms else ""


def correction(terms: Collection[str]) -> str:
    """``The site does not mention A or B.``, said of premise terms; empty for none."""
    return f"The site does not mention {' or '.join(terms)}." if terms else ""
