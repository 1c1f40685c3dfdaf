"""The graded battery: its items, loading and validation.

One JSON object a line in ``battery/v<N>.jsonl`` (package data); ``battery/VERSION`` names the
current one. A required fact is a list of alternatives (plain strings match case-insensitively
on word boundaries, strings prefixed ``re:`` are regular expressions), or a pair
``{"together": [ALTERNATIVES, ALTERNATIVES, ...]}`` whose parts must be stated in one sentence
(an employer with its city, a project with its year). A forbidden claim is a list of
alternatives.

An alternative the visitor's own words already satisfy (the question or the history), or that
a canned refusal satisfies, earns nothing; a fact that only such alternatives could satisfy is
rejected here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from site_knowledge.evals.text import CANNED_REFUSALS, matches, normalise
from site_knowledge.gateway.policy import Exchange

CATEGORIES: dict[str, int] = {
    "lookup": 16,
    "synthesis": 12,
    "followup": 8,
    "false_premise": 12,
    "private": 8,
    "must_refuse": 6,
    "must_not_refuse": 8,
    "gibberish": 4,
    "injection": 10,
    "paraphrase": 0,
    "off_topic": 0,
}
"""Every category with the minimum number of items the current battery must hold. ``paraphrase``
(the page's facts asked in words the page does not use) and ``off_topic`` (a question in the
site's own vocabulary that the site does not answer) are used by the corpora's answer sets."""

_YES_NO = re.compile(
    r"^\W*(?:does|did|do|is|was|are|were|has|have|had|can|could|will|would|should)\b", re.IGNORECASE
)


class DatasetError(ValueError):
    """A battery or question file is malformed; the message names the line."""


Alternatives = tuple[str, ...]


@dataclass(frozen=True)
class Fact:
    """A required fact: one part (a list of alternatives), or several parts that must be
    stated together, in one sentence."""

    parts: tuple[Alternatives, ...]

    @property
    def label(self) -> str:
        """A short name for notes: each part's first alternative, a regex abbreviated."""
        return " + ".join(label(part) for part in self.parts)


@dataclass(frozen=True)
class Item:
    """One graded battery question."""

    id: str
    category: str
    question: str
    history: tuple[Exchange, ...] = ()
    facts: tuple[Fact, ...] = ()
    forbidden: tuple[Alternatives, ...] = ()
    sources: tuple[str, ...] = ()
    must_refuse: bool = False
    may_refuse: bool = False
    private: bool = False
    """any amount, street address or age the site does not state is a forbidden claim"""
    computed: bool = False
    """the facts are worked out from the site (dates, sums), not stated verbatim by a source"""
    note: str = ""

    @property
    def visitor_text(self) -> str:
        """Everything the visitor supplied: the question and the history, normalised."""
        turns = [t for e in self.history for t in (e.question, e.answer)]
        return normalise("\n".join([*turns, self.question]))

    @property
    def yes_no(self) -> bool:
        """A yes/no question (``Does…``, ``Is…``): a plain "no" can correct its premise."""
        return _YES_NO.match(self.question) is not None


@dataclass(frozen=True)
class Battery:
    """A loaded battery and its version."""

    version: str
    path: Path
    items: tuple[Item, ...] = field(default_factory=tuple)


def label(alternatives: Alternatives) -> str:
    """A short name for a list of alternatives: the first, a regex abbreviated."""
    first = alternatives[0]
    if first.startswith("re:"):
        first = first[3:]
        return first if len(first) <= 48 else first[:47] + "…"
    return first


def earned_by_others(alternative: str, visitor: str) -> bool:
    """True when the visitor's words or a canned refusal already satisfy an alternative."""
    return matches(alternative, visitor) or any(matches(alternative, normalise(r)) for r in CANNED_REFUSALS)


def _alternatives(value: object, where: str) -> Alternatives:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(a, str) and a for a in value):
        raise DatasetError(f"{where}: each entry is a non-empty list of strings")
    for a in value:
        if a.startswith("re:"):
            try:
                re.compile(a[3:])
            except re.error as exc:
                raise DatasetError(f"{where}: bad regex {a!r}: {exc}") from exc
    return tuple(value)


def _facts(value: object, where: str) -> tuple[Fact, ...]:
    if not isinstance(value, list):
        raise DatasetError(f"{where}: expected a list of facts")
    out = []
    for entry in value:
        if isinstance(entry, dict):
            parts = entry.get("together")
            if set(entry) != {"together"} or not isinstance(parts, list) or len(parts) < 2:
                raise DatasetError(f'{where}: a pair is {{"together": [two or more alternative lists]}}')
            out.append(Fact(tuple(_alternatives(p, where) for p in parts)))
        else:
            out.append(Fact((_alternatives(entry, where),)))
    return tuple(out)


def _history(raw: object, where: str) -> tuple[Exchange, ...]:
    if not isinstance(raw, list):
        raise DatasetError(f"{where}: history must be a list")
    history = []
    for turn in raw:
        if not (
            isinstance(turn, dict)
            and isinstance(turn.get("question"), str)
            and isinstance(turn.get("answer"), str)
        ):
            raise DatasetError(f"{where}: history entries are {{question, answer}}")
        history.append(Exchange(turn["question"], turn["answer"]))
    return tuple(history)


_KEYS = {
    "id",
    "category",
    "question",
    "history",
    "facts",
    "forbidden",
    "sources",
    "must_refuse",
    "may_refuse",
    "private",
    "computed",
    "note",
}


def _flag(raw: dict[str, Any], key: str, where: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise DatasetError(f"{where}: {key} is a boolean")
    return value


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
    unknown = set(raw) - _KEYS
    if unknown:
        raise DatasetError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("id", "category", "question"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise DatasetError(f"{where}: {key!r} must be a non-empty string")
    if raw["category"] not in CATEGORIES:
        raise DatasetError(f"{where}: unknown category {raw['category']!r}")
    sources = raw.get("sources", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise DatasetError(f"{where}: sources must be a list of strings")
    forbidden = raw.get("forbidden", [])
    if not isinstance(forbidden, list):
        raise DatasetError(f"{where}: forbidden must be a list")
    item = Item(
        id=raw["id"],
        category=raw["category"],
        question=raw["question"],
        history=_history(raw.get("history", []), where),
        facts=_facts(raw.get("facts", []), f"{where} facts"),
        forbidden=tuple(_alternatives(f, f"{where} forbidden") for f in forbidden),
        sources=tuple(sources),
        must_refuse=_flag(raw, "must_refuse", where),
        may_refuse=_flag(raw, "may_refuse", where),
        private=_flag(raw, "private", where),
        computed=_flag(raw, "computed", where),
        note=str(raw.get("note", "")),
    )
    _check(item, where)
    return item


def _check(item: Item, where: str) -> None:
    """The rules an item must meet beyond its shape."""
    if item.must_refuse and item.may_refuse:
        raise DatasetError(f"{where}: must_refuse and may_refuse exclude each other")
    if item.category == "followup" and not item.history:
        raise DatasetError(f"{where}: a follow-up needs the previous exchange")
    if item.category in ("private", "must_refuse", "off_topic", "gibberish") and not item.must_refuse:
        raise DatasetError(f"{where}: a {item.category} item must be refused")
    if item.category == "private" and not item.private:
        raise DatasetError(f"{where}: a private item is flagged private")
    if item.category == "false_premise" and not item.may_refuse:
        raise DatasetError(f"{where}: a false premise may be declined (may_refuse)")
    if item.must_refuse and (item.sources or item.facts):
        raise DatasetError(f"{where}: an item that must be refused has no sources and no facts")
    if not item.must_refuse and not item.facts:
        raise DatasetError(f"{where}: an answerable item needs required facts")
    visitor = item.visitor_text
    for fact in item.facts:
        open_parts = [p for p in fact.parts if not all(earned_by_others(a, visitor) for a in p)]
        if not open_parts:
            raise DatasetError(
                f"{where}: fact {fact.label!r} is satisfied only by the question, the history "
                "or a canned refusal"
            )


def json_lines(path: Path) -> Iterator[tuple[str, object]]:
    """Each non-blank line of a JSON-lines file, decoded, with ``file:line`` for errors."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: {exc}") from exc


def load_items(path: Path) -> tuple[Item, ...]:
    """Load and validate a battery file (JSON lines); ids must be unique."""
    items: list[Item] = []
    seen: set[str] = set()
    for where, raw in json_lines(path):
        item = parse_item(raw, where)
        if item.id in seen:
            raise DatasetError(f"{where}: duplicate id {item.id!r}")
        seen.add(item.id)
        items.append(item)
    return tuple(items)


def battery_dir() -> Path:
    """The batteries shipped with the package."""
    return Path(str(resources.files("site_knowledge.evals").joinpath("battery")))


def battery_path(name: Path | str | None = None) -> Path:
    """The file of a battery: the current one (``VERSION``), a shipped version (``"v1"``) or a file.

    Raises:
        DatasetError: when ``name`` is neither a file nor a shipped version.
    """
    if name is None:
        name = (battery_dir() / "VERSION").read_text(encoding="utf-8").strip()
    path = Path(name)
    if path.is_file():
        return path
    shipped = battery_dir() / f"{name}.jsonl"
    if not shipped.is_file():
        versions = sorted(p.stem for p in battery_dir().glob("*.jsonl"))
        raise DatasetError(f"{name}: no such file, nor a shipped battery version ({', '.join(versions)})")
    return shipped


def load_battery(name: Path | str | None = None) -> Battery:
    """Load a battery: the current one (``VERSION``), a shipped version (``"v1"``) or a file.

    Raises:
        DatasetError: when the battery is malformed or a named version does not exist.
    """
    path = battery_path(name)
    return Battery(version=path.stem, path=path, items=load_items(path))


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
    lang: str | None = None
    """The language it is asked in (the page's), for a site in several."""

    @property
    def gated(self) -> bool:
        """Off-topic, gibberish or an injection: a question the gate itself should refuse."""
        return not self.in_scope and self.kind in GATED_KINDS


def load_questions(path: Path) -> tuple[RetrievalQuestion, ...]:
    """Load a retrieval question file, or a battery file as retrieval questions.

    A question file has one ``{id, question, expected, kind, history?, lang?}`` object a line;
    ``kind`` is one of `ANSWERABLE_KINDS` (``expected`` non-empty) or `GATED_KINDS`
    (``expected`` empty), ``history`` the earlier questions, oldest first. A battery item
    becomes a question whose kind is its category (sources expected); its must-refuse items
    are ``off_topic`` when ``gate.json`` beside the battery lists them, else ``private``.
    """
    out: list[RetrievalQuestion] = []
    seen: set[str] = set()
    off_topic = _battery_off_topic(path)
    for where, raw in json_lines(path):
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
    unknown = set(raw) - {"id", "question", "expected", "kind", "history", "lang"}
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
    lang = raw.get("lang")
    if lang is not None and not (isinstance(lang, str) and lang.strip()):
        raise DatasetError(f"{where}: 'lang' must be a language tag such as 'zh'")
    return RetrievalQuestion(
        id=raw["id"],
        question=raw["question"],
        expected=tuple(expected),
        kind=kind,
        history=tuple(history),
        in_scope=kind not in GATED_KINDS,
        lang=lang,
    )
