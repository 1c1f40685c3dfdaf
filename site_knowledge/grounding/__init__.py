"""Grounding around the model: checks that do not rely on the model following rules.

Shared by the gateway and the evals; ``site_knowledge/browser/grounding.js`` is the
JavaScript twin, held to the same SPEC.md by ``tests/data/grounding_vectors.json``.
"""

from __future__ import annotations

from .answer import Context, Grounded, ground
from .attribution import Lexicon
from .claims import Support
from .evidence import Passage, heading_label
from .injection import is_injection
from .premises import notice

__all__ = ["Context", "Grounded", "Lexicon", "Passage", "Support", "ground",
           "heading_label", "is_injection", "notice"]
