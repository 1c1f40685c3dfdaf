"""The corpora's answer sets (``evals/<site>/answers.jsonl``): graded questions written from the
pages of a real third-party site, checked against that site's Markdown.

Each set meets the per-category minimums, names pages that exist, states its facts in the words
of those pages, and its paraphrases share no content word with the page they expect.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from test_eval_datasets import _FUNCTION_WORDS, _words

from site_knowledge.evals.dataset import Item, load_items
from site_knowledge.evals.text import matches, normalise

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO / "tests" / "corpora"
ANSWER_SETS = {
    "netbox": CORPORA / "netbox-docs" / "docs",
    "drf-docs": CORPORA / "drf-docs" / "docs",
    "evaluationcontext-blog": CORPORA / "evaluationcontext-blog" / "docs",
    "fastapi-docs": CORPORA / "fastapi-docs" / "docs",
}
"""Each answer set (``evals/<name>/answers.jsonl``) and the docs folder its sources are in."""

PRODUCT_WORDS = {
    "netbox": _words("NetBox"),
    "drf-docs": _words("Django REST framework DRF"),
    "evaluationcontext-blog": _words("Evaluation Context"),
    "fastapi-docs": _words("FastAPI"),
}
"""The product's own name, which a paraphrase may use."""

MINIMUMS = {
    "lookup": 14,
    "paraphrase": 8,
    "synthesis": 5,
    "followup": 6,
    "false_premise": 5,
    "off_topic": 6,
    "gibberish": 3,
    "injection": 4,
    "must_not_refuse": 4,
}

_LINK_TARGET = re.compile(r"\]\([^)]*\)|\]\[[^\]]*\]")
_BRACKETS = re.compile(r"[\[\]]")


def _answers(name: str) -> tuple[Item, ...]:
    return load_items(REPO / "evals" / name / "answers.jsonl")


def markdown_text(path: Path) -> str:
    """A page's Markdown as a fact is compared with it: a link keeps its text and loses its
    target (``[text](url)`` and ``[text][ref]`` read ``text``), the remaining square brackets
    go, and `normalise` lowers the
    case, straightens quotes and dashes, drops the emphasis and code marks (`` ` * _ ``) and
    collapses whitespace."""
    text = path.read_text(encoding="utf-8")
    return normalise(_BRACKETS.sub("", _LINK_TARGET.sub("]", text)))


def _unstated(item: Item, docs: Path) -> list[str]:
    """Plain main alternatives of the item's facts that none of its sources states."""
    said = [markdown_text(docs / s) for s in item.sources]
    main = [a for f in item.facts for part in f.parts for a in part[:1] if not a.startswith("re:")]
    return [a for a in main if not any(matches(a, text) for text in said)]


@pytest.mark.parametrize("name", sorted(ANSWER_SETS))
def test_answer_set_meets_the_category_minimums(name: str) -> None:
    items = _answers(name)
    counts = Counter(item.category for item in items)
    assert len(items) >= 50
    short = {c: counts[c] for c, minimum in MINIMUMS.items() if counts[c] < minimum}
    assert not short, f"{name}: {short}"
    assert not {"private", "must_refuse"} & set(counts)


@pytest.mark.parametrize("name", sorted(ANSWER_SETS))
def test_answer_set_sources_exist_and_state_the_facts(name: str) -> None:
    docs = ANSWER_SETS[name]
    for item in _answers(name):
        missing = [s for s in item.sources if not (docs / s).is_file()]
        assert not missing, f"{item.id}: {missing}"
        assert item.must_refuse or item.sources, f"{item.id}: an answerable item names its pages"
        if not (item.must_refuse or item.computed):
            assert not _unstated(item, docs), f"{item.id}: {_unstated(item, docs)}"


def _title(path: Path) -> str:
    """A page's H1 title: its first ``# `` line."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:]
    return ""


@pytest.mark.parametrize("name", sorted(ANSWER_SETS))
def test_answer_set_paraphrases_share_no_content_word_with_their_pages(name: str) -> None:
    """A paraphrase was written from its first source: it shares no content word with that page,
    and no word of five letters or more with the title of any page it expects (another page,
    release notes say, may state the same fact in words of its own)."""
    docs = ANSWER_SETS[name]
    allowed = _FUNCTION_WORDS | PRODUCT_WORDS[name]
    for item in _answers(name):
        if item.category != "paraphrase":
            continue
        words = _words(item.question) - allowed
        shared = words & _words((docs / item.sources[0]).read_text(encoding="utf-8"))
        assert not shared, f"{item.id} shares {sorted(shared)} with {item.sources[0]}"
        long_words = {w for w in words if len(w) >= 5}
        for path in item.sources:
            in_title = long_words & _words(_title(docs / path))
            assert not in_title, f"{item.id} shares {sorted(in_title)} with the title of {path}"


def test_answer_set_ids_are_unique_across_sets() -> None:
    ids = Counter(item.id for name in ANSWER_SETS for item in _answers(name))
    assert not [i for i, n in ids.items() if n > 1]
