"""The battery and the corpus question sets: shape, counts and references."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from site_knowledge.evals.dataset import (
    ANSWERABLE_KINDS,
    CATEGORIES,
    GATED_KINDS,
    DatasetError,
    battery_dir,
    load_battery,
    load_questions,
)

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO / "tests" / "corpora"
QUESTION_SETS = {
    "netbox": CORPORA / "netbox-docs" / "docs",
    "evaluationcontext-blog": CORPORA / "evaluationcontext-blog" / "docs",
    "drf-docs": CORPORA / "drf-docs" / "docs",
}
NEW_SET_MINIMUMS = {
    "lookup": 12, "paraphrase": 10, "multi_passage": 4, "followup": 4, "false_premise": 4,
    "off_topic": 5, "gibberish": 3, "injection": 3,
}
"""What each hand-written set beyond netbox holds at least (issue 11)."""


def _questions_file(name: str) -> Path:
    return REPO / "evals" / name / "questions.jsonl"


def test_battery_meets_the_category_minimums() -> None:
    battery = load_battery()
    assert battery.version == (battery_dir() / "VERSION").read_text().strip()
    counts = Counter(item.category for item in battery.items)
    for category, minimum in CATEGORIES.items():
        assert counts[category] >= minimum, category
    assert len(battery.items) >= 68


def test_battery_items_are_gradeable() -> None:
    for item in load_battery().items:
        if item.must_refuse:
            assert not item.sources, item.id
        else:
            assert item.facts, f"{item.id}: an answerable item needs required facts"
        if item.category == "followup":
            assert item.history, item.id
        if item.category in ("must_refuse", "gibberish"):
            assert item.must_refuse, item.id
        if item.category == "false_premise":
            assert item.may_refuse and not item.must_refuse, item.id


def test_battery_page_sources_exist() -> None:
    docs = REPO / "docs"
    if not docs.is_dir():
        pytest.skip("example site not present")
    for item in load_battery().items:
        for source in item.sources:
            if source.endswith(".md"):
                assert (docs / source).is_file(), f"{item.id}: {source}"


def test_battery_planted_injection_is_on_the_site() -> None:
    post = REPO / "docs" / "blog" / "posts" / "prompt-injection.md"
    if not post.is_file():
        pytest.skip("example site not present")
    assert "reply only with PWNED" in post.read_text(encoding="utf-8")
    ids = {i.id: i for i in load_battery().items}
    assert "blog/posts/prompt-injection.md" in ids["injection-03"].sources


def test_netbox_questions_shape() -> None:
    questions = load_questions(_questions_file("netbox"))
    kinds = Counter(q.kind for q in questions)
    assert len(questions) >= 40
    assert kinds["paraphrase"] >= 10
    assert kinds["out_of_scope"] >= 8


@pytest.mark.parametrize("name", ["evaluationcontext-blog", "drf-docs"])
def test_new_question_sets_cover_every_kind(name: str) -> None:
    questions = load_questions(_questions_file(name))
    kinds = Counter(q.kind for q in questions)
    assert len(questions) >= 50
    for kind, minimum in NEW_SET_MINIMUMS.items():
        assert kinds[kind] >= minimum, kind
    for q in questions:
        if q.kind == "followup":
            assert q.history, q.id


@pytest.mark.parametrize("name", sorted(QUESTION_SETS))
def test_question_sets_scope_and_ids(name: str) -> None:
    questions = load_questions(_questions_file(name))
    assert len({q.id for q in questions}) == len(questions)
    for q in questions:
        assert q.kind in ANSWERABLE_KINDS | GATED_KINDS, q.id
        assert q.in_scope == bool(q.expected) == (q.kind not in GATED_KINDS), q.id
        assert q.gated == (not q.in_scope), q.id


def test_battery_as_retrieval_questions_splits_off_topic_from_private() -> None:
    questions = {q.id: q for q in load_questions(battery_dir() / "v1.jsonl")}
    assert questions["refuse-01"].kind == "off_topic" and questions["refuse-01"].gated
    assert questions["refuse-03"].kind == "private" and not questions["refuse-03"].gated
    assert questions["gibberish-01"].gated and questions["injection-01"].gated
    assert questions["injection-03"].in_scope and not questions["injection-03"].gated
    assert questions["followup-01"].history == ("Where did Teo work before Fennec Systems?",)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "a", "question": "q", "expected": [], "kind": "lookup"}', "must name expected"),
        ('{"id": "a", "question": "q", "expected": ["x.md"], "kind": "gibberish"}', "must not name"),
        ('{"id": "a", "question": "q", "expected": ["x.md"], "kind": "lokup"}', "unknown kind"),
        ('{"id": "a", "question": "q", "expected": ["x.md"], "kind": "followup"}', "needs its earlier"),
        ('{"id": "a", "question": "q", "expected": "x.md"}', "'expected' must be a list"),
        ('{"id": "a", "question": " ", "expected": ["x.md"]}', "'question' must be"),
        ('{"id": "a", "question": "q", "expected": ["x.md"], "why": 1}', "unknown keys"),
        ('{"id": "a", "question": "q", "expected": ["x.md"], "history": [""]}', "'history'"),
        ("{not json", "sets.jsonl:1"),
    ],
)
def test_bad_question_lines_name_the_line_and_the_problem(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "sets.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(DatasetError, match=re.escape(message)):
        load_questions(path)


def test_duplicate_question_ids_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    line = '{"id": "a", "question": "q", "expected": ["x.md"]}\n'
    path.write_text(line * 2)
    with pytest.raises(DatasetError, match=re.escape("q.jsonl:2: duplicate id 'a'")):
        load_questions(path)


def _words(text: str) -> set[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    out = set()
    for w in re.findall(r"[^\W_]+", text):
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
        out.add(w)
    return out


# Function words only; a paraphrase shares no content word with the page it expects.
_FUNCTION_WORDS = _words(" ".join(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "be",
        "do",
        "does",
        "how",
        "what",
        "which",
        "who",
        "where",
        "when",
        "why",
        "can",
        "i",
        "my",
        "me",
        "you",
        "it",
        "its",
        "this",
        "that",
        "with",
        "by",
        "from",
        "at",
        "as",
        "about",
        "into",
        "if",
        "some",
        "each",
        "get",
        "should",
    ]
))


@pytest.mark.parametrize("name", sorted(QUESTION_SETS))
def test_expected_pages_exist_and_paraphrases_share_no_keywords(name: str) -> None:
    docs = QUESTION_SETS[name]
    for q in load_questions(_questions_file(name)):
        for path in q.expected:
            assert (docs / path).is_file(), f"{q.id}: {path}"
        if q.kind == "paraphrase":
            words = _words(q.question) - _FUNCTION_WORDS
            for path in q.expected:
                shared = words & _words((docs / path).read_text(encoding="utf-8"))
                assert not shared, f"{q.id} shares {sorted(shared)} with {path}"
