"""The content-gap ledger: per day, how many questions each page or section of the site left
unanswered, and how visitors voted on the answers that cited it.

Counted without profiling: a question is attributed to the nearest page or section (its URL
and label), never kept as text, and nothing about the visitor is recorded. Kinds:

- ``refused``: refused before any model ran (the relevance gate, or the router), attributed
  to the passage nearest the question in meaning;
- ``declined``: the model ran and the final answer declines (``done.refused``), attributed to
  the first passage it read;
- ``down`` and ``up``: votes, counted once for each page the answer cited.

With ``keep_questions_days`` (``--keep-questions DAYS``, off by default) the text of refused
and declined questions is kept too, in a separate file of the state folder, and every line
older than that many days is deleted whenever the ledger opens or writes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COUNTS_FILE = "content-gaps.json"
QUESTIONS_FILE = "kept-questions.jsonl"
KINDS = ("refused", "declined", "down", "up")
GAPS = ("refused", "declined", "down")
"""The kinds that mark a gap (an up vote marks the opposite)."""
DAY_S = 86_400
log = logging.getLogger(__name__)


def default_state_dir() -> Path:
    """``$XDG_STATE_HOME/site-knowledge``, else ``~/.local/state/site-knowledge``."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "site-knowledge"


def day_of(at: float) -> str:
    """The UTC date of a POSIX time, ``YYYY-MM-DD``."""
    return time.strftime("%Y-%m-%d", time.gmtime(at))


@dataclass(frozen=True)
class Place:
    """A page or section of the site: its URL (with the anchor) and its label."""

    url: str
    label: str


def _write_atomically(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class Ledger:
    """Per-day counts by kind and place; in memory only when ``directory`` is None.

    Args:
        directory: the state folder (``content-gaps.json``, and ``kept-questions.jsonl`` with
            ``keep_questions_days``), or None to keep the counts in memory.
        keep_questions_days: keep refused and declined questions' text this many days.
        clock: the time source (tests).
        prune: on opening, delete the kept questions whose time is up, or all of them when
            ``keep_questions_days`` is None (the gateway); False to only read (the report).
    """

    def __init__(self, directory: Path | None = None, keep_questions_days: int | None = None,
                 clock: Any = time.time, prune: bool = True) -> None:
        if keep_questions_days is not None and keep_questions_days < 1:
            raise ValueError("keep_questions_days must be at least 1")
        if keep_questions_days is not None and directory is None:
            raise ValueError("keeping questions needs a state folder")
        self.directory = directory
        self.keep_questions_days = keep_questions_days
        self.clock = clock
        self.days: dict[str, dict[str, dict[str, int]]] = {}
        self.labels: dict[str, str] = {}
        if directory is not None:
            self._load(directory / COUNTS_FILE)
            if prune:
                self.prune_questions()

    def _load(self, path: Path) -> None:
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except ValueError as error:
            raise ValueError(f"{path}: not a content-gap file ({error})") from None
        self.days = {day: {kind: dict(places) for kind, places in kinds.items()}
                     for day, kinds in saved.get("days", {}).items()}
        self.labels = dict(saved.get("labels", {}))

    def count(self, kind: str, place: Place, question: str | None = None, by: int = 1) -> None:
        """Add ``by`` to today's ``kind`` at ``place``; keep ``question``'s text only when
        questions are kept and the kind is a refusal."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        now = self.clock()
        places = self.days.setdefault(day_of(now), {}).setdefault(kind, {})
        places[place.url] = max(0, places.get(place.url, 0) + by)
        self.labels[place.url] = place.label
        if self.directory is None:
            return
        try:
            self._write(self.directory, now, kind, place, question)
        except OSError as error:  # counting never breaks an answer's stream
            log.warning("content-gap counts not written to %s: %s", self.directory,
                        error.strerror or type(error).__name__)

    def _write(self, directory: Path, now: float, kind: str, place: Place,
               question: str | None) -> None:
        _write_atomically(directory / COUNTS_FILE, json.dumps(
            {"version": 1, "days": self.days, "labels": self.labels}, indent=1, sort_keys=True))
        if question is not None and self.keep_questions_days and kind in ("refused", "declined"):
            self.prune_questions()
            line = {"at": round(now), "until": round(now + self.keep_questions_days * DAY_S),
                    "kind": kind, "url": place.url, "question": question}
            with (directory / QUESTIONS_FILE).open("a", encoding="utf-8") as out:
                out.write(json.dumps(line, ensure_ascii=False) + "\n")

    def prune_questions(self) -> None:
        """Delete the kept questions whose time is up (all of them when keeping is off)."""
        if self.directory is None:
            return
        if not self.keep_questions_days:
            (self.directory / QUESTIONS_FILE).unlink(missing_ok=True)
            return
        kept_questions(self.directory, self.clock())

    def summary(self, days: int | None = None) -> dict[str, Any]:
        """The counts of the last ``days`` days (all when None): per day and kind, the totals,
        and per place its counts by kind, places with the most gaps first."""
        recent = sorted(self.days)
        if days is not None:
            cutoff = day_of(self.clock() - (days - 1) * DAY_S)
            recent = [d for d in recent if d >= cutoff]
        by_place: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(KINDS, 0))
        per_day = {}
        for day in recent:
            per_day[day] = {kind: sum(self.days[day].get(kind, {}).values()) for kind in KINDS}
            for kind, places in self.days[day].items():
                for url, n in places.items():
                    by_place[url][kind] += n
        ranked = sorted(by_place.items(), key=lambda item: (-sum(item[1][k] for k in GAPS), item[0]))
        return {"days": per_day,
                "places": [{"url": url, "label": self.labels.get(url, url), **counts}
                           for url, counts in ranked]}


def kept_questions(directory: Path, now: float) -> list[dict[str, Any]]:
    """The kept questions in a state folder, oldest first; those whose time is up (each line
    carries its own ``until``, so the retention holds whoever reads the file) are deleted."""
    path = directory / QUESTIONS_FILE
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    kept = [line for line in lines if line["until"] > now]
    if len(kept) != len(lines):
        _write_atomically(path, "".join(json.dumps(line, ensure_ascii=False) + "\n"
                                        for line in kept))
    return kept
