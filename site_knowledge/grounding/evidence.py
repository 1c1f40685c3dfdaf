"""An evidence passage as the model saw it, and its label (SPEC.md, "Claims")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Passage:
    """One evidence passage as the model saw it."""

    label: str
    """Its title and heading path."""
    text: str
    fiction: bool = False
    """From a source labelled fiction: cited when drawn on, never support, never quoted."""
    url: str = ""
    """Where it is published (a fact passage's citation links there)."""

    @property
    def whole(self) -> str:
        return f"{self.label}\n{self.text}"


def heading_label(title: str, heading: str) -> str:
    """A passage's label: its source's title, then its heading path when that differs."""
    return f"{title} > {heading}" if heading and heading != title else title
