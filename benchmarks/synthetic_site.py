"""A large MkDocs site made of real pages: the build-scale benchmark's input.

How it is made, deterministically from a corpora folder laid out as ``tests/corpora/`` (each
corpus a ``<name>/docs/`` tree of Markdown):

- *copy 0* holds every page of every corpus (FastAPI's docs whole, all its languages, with
  the full corpora), under ``copy-000/<corpus>/<path>``;
- *copy k* (k = 1, 2, ...) holds the pages of every corpus but ``fastapi-docs`` again, under
  ``copy-<k>/<corpus>/<path>``;
- within each copy the pages are ordered by the SHA-256 of ``<corpus>/<path>``, so any
  prefix is a mix of corpora and languages; the site of N pages is ``index.md`` (written
  here, naming what the site holds) and the first N - 1 pages of that sequence.

Each page is copied byte for byte: kept whole, renamed only by its folder, so relative links
between pages of one corpus still resolve within a copy. Images and other files are left out
(MkDocs notes the missing images; no passage text depends on one). The ``mkdocs.yml`` uses
Material, as the corpora do, with Google fonts off and a nav of the index alone: every page is
built, but no page renders a nav of 10,000 entries (an automatic nav would make a plain build
quadratic in pages). Repeated pages give repeated passage texts, which the embedding cache
embeds once.

    .venv/bin/python -m benchmarks.synthetic_site --pages 10000 \
        --corpora /work/shared/corpora --out /tmp/synthetic-10k
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

WHOLE = "fastapi-docs"
"""The corpus that appears once, in copy 0 only."""
MARKDOWN_EXTENSIONS: list[object] = [
    "abbr", "admonition", "attr_list", "def_list", "footnotes", "md_in_html", "tables",
    {"toc": {"permalink": True}}, "pymdownx.details", "pymdownx.superfences",
    {"pymdownx.tabbed": {"alternate_style": True}},
]


@dataclass(frozen=True)
class CorpusPage:
    """One Markdown page of a corpus: its file and its path inside the corpus' docs."""

    corpus: str
    path: str
    file: Path


@dataclass(frozen=True)
class SyntheticSite:
    """A generated site: its config file and how many pages came from each copy."""

    config_file: Path
    pages: int
    copies: int
    whole: bool
    """Whether every page of ``fastapi-docs`` is in the site."""


def corpus_pages(corpora: Path) -> dict[str, list[CorpusPage]]:
    """Every corpus under ``corpora`` (a folder with ``docs/``) and its Markdown pages.

    Raises:
        SystemExit: ``corpora`` is missing or holds no corpus with Markdown pages.
    """
    if not corpora.is_dir():
        raise SystemExit(f"synthetic_site: corpora folder {corpora} does not exist")
    found: dict[str, list[CorpusPage]] = {}
    for corpus in sorted(p for p in corpora.iterdir() if (p / "docs").is_dir()):
        docs = corpus / "docs"
        pages = [CorpusPage(corpus.name, f.relative_to(docs).as_posix(), f)
                 for f in docs.rglob("*.md") if f.is_file()]
        if pages:
            found[corpus.name] = sorted(pages, key=lambda p: p.path)
    if not found:
        raise SystemExit(f"synthetic_site: no corpus with docs/*.md under {corpora}")
    return found


def _shuffled(pages: list[CorpusPage]) -> list[CorpusPage]:
    return sorted(pages, key=lambda p: hashlib.sha256(f"{p.corpus}/{p.path}".encode()).digest())


def page_sequence(corpora: dict[str, list[CorpusPage]]) -> Iterator[tuple[int, CorpusPage]]:
    """The endless sequence of (copy number, page): copy 0 all corpora, later copies all but
    ``fastapi-docs`` (every corpus again when it is the only one)."""
    repeated = {name: pages for name, pages in corpora.items() if name != WHOLE} or corpora
    yield from ((0, page) for page in _shuffled([p for ps in corpora.values() for p in ps]))
    for copy in itertools.count(1):
        yield from ((copy, page) for page in _shuffled([p for ps in repeated.values() for p in ps]))


def make_site(corpora: Path, out: Path, pages: int) -> SyntheticSite:
    """Write a site of ``pages`` pages (the index included) into ``out`` (replaced).

    Raises:
        SystemExit: fewer than 2 pages asked for, or no corpus under ``corpora``.
    """
    if pages < 2:
        raise SystemExit(f"synthetic_site: --pages must be at least 2, not {pages}")
    found = corpus_pages(corpora)
    if out.exists():
        shutil.rmtree(out)
    docs = out / "docs"
    copies = 0
    whole = 0
    for copy, page in itertools.islice(page_sequence(found), pages - 1):
        target = docs / f"copy-{copy:03d}" / page.corpus / page.path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page.file, target)
        copies = copy + 1
        whole += page.corpus == WHOLE
    (docs / "index.md").write_text(_index(pages, copies, sorted(found)), encoding="utf-8")
    config_file = out / "mkdocs.yml"
    config_file.write_text(yaml.safe_dump(_config(pages), sort_keys=False), encoding="utf-8")
    return SyntheticSite(config_file, pages, copies, whole == len(found.get(WHOLE, [])))


def _index(pages: int, copies: int, corpora: list[str]) -> str:
    return (f"# A synthetic site of {pages} pages\n\n"
            f"Real pages of {', '.join(corpora)}, each kept whole, in {copies} renamed "
            f"copies (`copy-000/` to `copy-{copies - 1:03d}/`); made by "
            "`python -m benchmarks.synthetic_site`.\n")


def _config(pages: int) -> dict[str, object]:
    return {
        "site_name": f"Synthetic site ({pages} pages)",
        "site_url": "https://synthetic.example.org/",
        "theme": {"name": "material", "font": False},
        "plugins": ["search"],
        "nav": ["index.md"],
        "not_in_nav": "/copy-*/\n",
        "markdown_extensions": MARKDOWN_EXTENSIONS,
    }


def main(argv: list[str] | None = None) -> None:
    """Generate the site and print what it holds."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, required=True, help="pages in the site, index included")
    parser.add_argument("--corpora", type=Path, required=True,
                        help="folder of corpora, each <name>/docs/ (e.g. tests/corpora)")
    parser.add_argument("--out", type=Path, required=True, help="the site folder (replaced)")
    args = parser.parse_args(argv)
    site = make_site(args.corpora, args.out, args.pages)
    print(f"{site.config_file}: {site.pages} pages in {site.copies} copies, "
          f"{WHOLE} {'whole' if site.whole else 'in part'}")


if __name__ == "__main__":
    main()
