"""Grounding around the model: checks that do not rely on the model following rules.

Shared by the gateway and the evals; ``site_knowledge/browser/grounding.js`` is the
JavaScript twin, held to the same SPEC.md by ``tests/data/grounding_vectors.json``.
"""

from __future__ import annotations

from .answer import Context, Grounded, Passage, ground, heading_label
from .attribution import Lexicon
from .claims import Support
from .injection import is_injection
from .premises import SiteWords, notice

__all__ = ["Context", "Grounded", "Lexicon", "Passage", "SiteWords", "Support", "ground",
           "heading_label", "is_injection", "notice"]
