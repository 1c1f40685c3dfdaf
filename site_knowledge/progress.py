"""A terminal progress bar with a rate, quiet when stderr is not a terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from typing import TextIO, TypeVar

T = TypeVar("T")


class ProgressBar:
    """``label [#####.....] 120/300 45.2 passages/s``, redrawn in place on a terminal."""

    def __init__(self, label: str, total: int, unit: str, stream: TextIO | None = None) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self.stream = stream or sys.stderr
        self.started = time.perf_counter()
        self._interactive = self.stream.isatty()

    @property
    def rate(self) -> float:
        """Items per second so far."""
        elapsed = time.perf_counter() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def advance(self, count: int) -> None:
        """Record ``count`` more items and redraw."""
        self.done += count
        if self._interactive:
            filled = int(30 * self.done / max(self.total, 1))
            bar = "#" * filled + "." * (30 - filled)
            self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} "
                              f"{self.rate:.1f} {self.unit}/s")
            self.stream.flush()

    def close(self) -> None:
        """Finish with one summary line: count and rate."""
        summary = f"{self.label}: {self.done}/{self.total} {self.unit} at {self.rate:.1f} {self.unit}/s"
        self.stream.write(f"\r{summary}\n" if self._interactive else f"{summary}\n")
        self.stream.flush()


def track(items: Sequence[T], label: str, unit: str, stream: TextIO | None = None) -> Iterator[T]:
    """Yield ``items`` one by one behind a `ProgressBar` that closes after the last."""
    bar = ProgressBar(label, len(items), unit, stream)
    for item in items:
        yield item
        bar.advance(1)
    bar.close()
