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


def load_questions(path: Path) -> tuple[RetrievalQuestion, ...]:
    """Load a retrieval question file: netbox-style ``{id, question, expected, kind}`` lines
    or a battery file, whose items become questions (sources expected; must-refuse and
    gibberish items expected to be gated)."""
    out: list[RetrievalQuestion] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        raw = json.loads(line)
        where = f"{path.name}:{n}"
        if "category" in raw:
            item = parse_item(raw, where)
            out.append(
                RetrievalQuestion(
                    id=item.id,
                    question=item.question,
                    expected=() if item.must_refuse else item.sources,
                    kind=item.category,
                    history=tuple(t.question for t in item.history),
                    in_scope=not item.must_refuse,
                )
            )
            continue
        expected = raw.get("expected")
        if not isinstance(expected, list) or not isinstance(raw.get("question"), str):
            raise DatasetError(f"{where}: needs question and expected")
        out.append(
            RetrievalQuestion(
                id=str(raw["id"]),
                question=raw["question"],
                expected=tuple(expected),
                kind=str(raw.get("kind", "lookup")),
                history=tuple(raw.get("history", [])),
                in_scope=bool(expected) and raw.get("kind") != "out_of_scope",
            )
        )
    return tuple(out)
