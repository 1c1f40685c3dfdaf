"""The graded battery: its items, loading and validation.

One JSON object a line in ``evals/battery/v<N>.jsonl``; the file ``evals/battery/VERSION``
names the current one. A fact or a forbidden claim is a list of alternatives: plain strings
match case-insensitively on word boundaries, strings prefixed ``re:`` are regular expressions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from site_knowledge.gateway.policy import Exchange

BATTERY_DIR = Path(__file__).resolve().parent / "battery"

CATEGORIES: dict[str, int] = {
    "lookup": 16,
    "synthesis": 8,
    "followup": 8,
    "false_premise": 8,
    "must_refuse": 8,
    "must_not_refuse": 8,
    "gibberish": 4,
    "injection": 4,
}
"""Every category with the minimum number of items the battery must hold."""


class DatasetError(ValueError):
    """A battery or question file is malformed; the message names the line."""


@dataclass(frozen=True)
class Item:
    """One graded battery question."""

    id: str
    category: str
    question: str
    history: tuple[Exchange, ...] = ()
    facts: tuple[tuple[str, ...], ...] = ()
    forbidden: tuple[tuple[str, ...], ...] = ()
    sources: tuple[str, ...] = ()
    must_refuse: bool = False
    may_refuse: bool = False
    note: str = ""


@dataclass(frozen=True)
class Battery:
    """A loaded battery and its version."""

    version: str
    path: Path
    items: tuple[Item, ...] = field(default_factory=tuple)


def _alternatives(value: object, where: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list):
        raise DatasetError(f"{where}: expected a list of alternative lists")
    out: list[tuple[str, ...]] = []
    for alt in value:
        if isinstance(alt, str):
            alt = [alt]
        if not isinstance(alt, list) or not alt or not all(isinstance(a, str) and a for a in alt):
            raise DatasetError(f"{where}: each entry is a non-empty list of strings")
        for a in alt:
            if a.startswith("re:"):
                try:
                    re.compile(a[3:])
                except re.error as exc:
                    raise DatasetError(f"{where}: bad regex {a!r}: {exc}") from exc
        out.append(tuple(alt))
    return tuple(out)


def parse_item(raw: object, where: str) -> Item:
    """Validate one decoded JSON object and turn it into an `Item`.

    Args:
        raw: The decoded JSON value.
        where: File and line, for error messages.

    Returns:
        The item.
    """
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: not an object")
    for key in ("id", "category", "question"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise DatasetError(f"{where}: {key!r} must be a non-empty string")
    if raw["category"] not in CATEGORIES:
        raise DatasetError(f"{where}: unknown category {raw['category']!r}")
    history_raw = raw.get("history", [])
    if not isinstance(history_raw, list):
        raise DatasetError(f"{where}: history must be a list")
    history: list[Exchange] = []
    for turn in history_raw:
        if not (
            isinstance(turn, dict)
            and isinstance(turn.get("question"), str)
            and isinstance(turn.get("answer"), str)
        ):
            raise DatasetError(f"{where}: history entries are {{question, answer}}")
        history.append(Exchange(turn["question"], turn["answer"]))
    if raw["category"] == "followup" and not history:
        raise DatasetError(f"{where}: a follow-up needs the previous exchange")
    sources = raw.get("sources", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise DatasetError(f"{where}: sources must be a list of strings")
    must_refuse = raw.get("must_refuse", False)
    may_refuse = raw.get("may_refuse", False)
    if not isinstance(must_refuse, bool) or not isinstance(may_refuse, bool):
        raise DatasetError(f"{where}: must_refuse and may_refuse are booleans")
    unknown = set(raw) - {
        "id",
        "category",
        "question",
        "history",
        "facts",
        "forbidden",
        "sources",
        "must_refuse",
        "may_refuse",
        "note",
    }
    if unknown:
        raise DatasetError(f"{where}: unknown keys {sorted(unknown)}")
    return Item(
        id=raw["id"],
        category=raw["category"],
        question=raw["question"],
        history=tuple(history),
        facts=_alternatives(raw.get("facts", []), f"{where} facts"),
        forbidden=_alternatives(raw.get("forbidden", []), f"{where} forbidden"),
        sources=tuple(sources),
        must_refuse=must_refuse,
        may_refuse=may_refuse,
        note=str(raw.get("note", "")),
    )


def load_items(path: Path) -> tuple[Item, ...]:
    """Load and validate a battery file (JSON lines); ids must be unique."""
    items: list[Item] = []
    seen: set[str] = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: {exc}") from exc
        item = parse_item(raw, where)
        if item.id in seen:
            raise DatasetError(f"{where}: duplicate id {item.id!r}")
        seen.add(item.id)
        items.append(item)
    return tuple(items)


def load_battery(path: Path | None = None) -> Battery:
    """Load the current battery (named by ``VERSION``) or the file at ``path``."""
    if path is None:
        version = (BATTERY_DIR / "VERSION").read_text(encoding="utf-8").strip()
        path = BATTERY_DIR / f"{version}.jsonl"
    else:
        version = path.stem
    return Battery(version=version, path=path, items=load_items(path))


ANSWERABLE_KINDS = frozenset(
    {"lookup", "paraphrase", "multi_passage", "followup", "false_premise"}
)
"""Kinds of retrieval question the site answers (a false premise is answered by correcting it)."""

GATED_KINDS = frozenset({"out_of_scope", "off_topic", "gibberish", "injection"})
"""Kinds of retrieval question the gate should refuse before any model runs."""

GATE_LABELS = "gate.json"
"""Beside a battery: per battery version, the must-refuse items that are off-topic (the gate
should refuse them); the other must-refuse items are private questions about what the site
covers, which only the model can decline."""


@dataclass(frozen=True)
class RetrievalQuestion:
    """A retrieval-eval question: expected pages (paths) or source ids.

    ``in_scope`` says whether the gate should let it through; a question can be in scope
    without expected pages (an age asked about a person the site covers)."""

    id: str
    question: str
    expected: tuple[str, ...]
    kind: str
    history: tuple[str, ...] = ()
    in_scope: bool = True

    @property
    def gated(self) -> bool:
        """Off-topic, gibberish or an injection: a question the gate itself should refuse."""
        return not self.in_scope and self.kind in GATED_KINDS


def load_questions(path: Path) -> tuple[RetrievalQuestion, ...]:
    """Load a retrieval question file, or a battery file as retrieval questions.

    A question file has one ``{id, question, expected, kind, history?}`` object a line;
    ``kind`` is one of `ANSWERABLE_KINDS` (``expected`` non-empty) or `GATED_KINDS`
    (``expected`` empty), ``history`` the earlier questions, oldest first. A battery item
    becomes a question whose kind is its category (sources expected); its must-refuse items
    are ``off_topic`` when ``gate.json`` beside the battery lists them, else ``private``.
    """
    out: list[RetrievalQuestion] = []
    seen: set[str] = set()
    off_topic = _battery_off_topic(path)
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: {exc}") from exc
        question = (
            _battery_question(parse_item(raw, where), off_topic)
            if isinstance(raw, dict) and "category" in raw
            else _retrieval_question(raw, where)
        )
        if question.id in seen:
            raise DatasetError(f"{where}: duplicate id {question.id!r}")
        seen.add(question.id)
        out.append(question)
    return tuple(out)


def _battery_off_topic(path: Path) -> frozenset[str]:
    labels = path.parent / GATE_LABELS
    if not labels.is_file():
        return frozenset()
    try:
        data = json.loads(labels.read_text(encoding="utf-8"))
        ids = data.get(path.stem, {}).get("off_topic", [])
    except (json.JSONDecodeError, AttributeError) as exc:
        raise DatasetError(f"{labels.name}: expected {{version: {{off_topic: [ids]}}}}") from exc
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise DatasetError(f"{labels.name}: {path.stem}.off_topic must be a list of ids")
    return frozenset(ids)


def _battery_question(item: Item, off_topic: frozenset[str]) -> RetrievalQuestion:
    kind = item.category
    if item.must_refuse and kind == "must_refuse":
        kind = "off_topic" if item.id in off_topic else "private"
    return RetrievalQuestion(
        id=item.id,
        question=item.question,
        expected=() if item.must_refuse else item.sources,
        kind=kind,
        history=tuple(t.question for t in item.history),
        in_scope=not item.must_refuse,
    )


def _retrieval_question(raw: object, where: str) -> RetrievalQuestion:
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: not an object")
    unknown = set(raw) - {"id", "question", "expected", "kind", "history"}
    if unknown:
        raise DatasetError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("id", "question"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise DatasetError(f"{where}: {key!r} must be a non-empty string")
    expected = raw.get("expected")
    if not isinstance(expected, list) or not all(isinstance(e, str) and e for e in expected):
        raise DatasetError(f"{where}: 'expected' must be a list of page paths or source ids")
    kind = raw.get("kind", "lookup")
    if kind not in ANSWERABLE_KINDS | GATED_KINDS:
        known = ", ".join(sorted(ANSWERABLE_KINDS | GATED_KINDS))
        raise DatasetError(f"{where}: unknown kind {kind!r} (one of {known})")
    if (kind in GATED_KINDS) == bool(expected):
        raise DatasetError(
            f"{where}: a {kind} question must {'not ' if kind in GATED_KINDS else ''}"
            "name expected pages"
        )
    history = raw.get("history", [])
    if not isinstance(history, list) or not all(isinstance(h, str) and h.strip() for h in history):
        raise DatasetError(f"{where}: 'history' must be a list of earlier questions")
    if kind == "followup" and not history:
        raise DatasetError(f"{where}: a follow-up needs its earlier question in 'history'")
    return RetrievalQuestion(
        id=raw["id"],
        question=raw["question"],
        expected=tuple(expected),
        kind=kind,
        history=tuple(history),
        in_scope=kind not in GATED_KINDS,
    )
