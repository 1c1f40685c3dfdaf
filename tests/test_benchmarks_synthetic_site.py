"""The synthetic site generator: pages copied whole under renamed folders, deterministic, and a
site that MkDocs builds with every page but a nav of the index alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.synthetic_site import WHOLE, corpus_pages, main, make_site

CORPORA = Path(__file__).resolve().parent / "corpora"


def _pages(site_dir: Path) -> list[Path]:
    return sorted(p.relative_to(site_dir / "docs") for p in (site_dir / "docs").rglob("*.md"))


def test_a_site_holds_exactly_the_pages_asked_for_each_a_whole_corpus_page(tmp_path):
    site = make_site(CORPORA, tmp_path / "site", 50)
    pages = _pages(tmp_path / "site")
    assert len(pages) == 50 and Path("index.md") in pages
    for page in pages:
        if page.parts[0] == "index.md":
            continue
        copy, corpus, *rest = page.parts
        assert copy == "copy-000"
        source = CORPORA / corpus / "docs" / Path(*rest)
        assert (tmp_path / "site" / "docs" / page).read_bytes() == source.read_bytes()
    assert len({page.parts[1] for page in pages if page.parts[0] != "index.md"}) > 1, "a mix"
    assert (site.copies, site.whole) == (1, False)


def test_later_copies_repeat_every_corpus_but_fastapi_and_the_site_is_deterministic(tmp_path):
    everything = sum(len(pages) for pages in corpus_pages(CORPORA).values())
    site = make_site(CORPORA, tmp_path / "a", everything + 20)
    again = make_site(CORPORA, tmp_path / "b", everything + 20)
    assert _pages(tmp_path / "a") == _pages(tmp_path / "b")
    later = [p for p in _pages(tmp_path / "a") if p.parts[0] == "copy-001"]
    assert len(later) == 19 and not any(p.parts[1] == WHOLE for p in later)
    assert (site.copies, site.whole, again.whole) == (2, True, True)


def test_missing_corpora_and_too_few_pages_are_named(tmp_path):
    with pytest.raises(SystemExit, match=re.escape(f"corpora folder {tmp_path / 'nowhere'} does not exist")):
        make_site(tmp_path / "nowhere", tmp_path / "out", 10)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match=r"no corpus with docs/\*\.md under"):
        make_site(tmp_path / "empty", tmp_path / "out", 10)
    with pytest.raises(SystemExit, match="--pages must be at least 2, not 1"):
        main(["--pages", "1", "--corpora", str(CORPORA), "--out", str(tmp_path / "out")])


@pytest.mark.slow
def test_the_site_builds_every_page_with_a_nav_of_the_index_alone(tmp_path):
    site = make_site(CORPORA, tmp_path / "site", 12)
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(site.config_file),
                    "-d", str(tmp_path / "built")], check=True, capture_output=True,
                   env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""})
    built = list((tmp_path / "built").rglob("index.html"))
    assert len(built) == 12
    home = (tmp_path / "built" / "index.html").read_text(encoding="utf-8")
    assert 'href="copy-000/' not in home and "copy-000/" in home, "named in text, not in the nav"
