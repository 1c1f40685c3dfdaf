"""Query-time retrieval over a knowledge artifact (the Python twin of the browser's search).

The search classes load on first use, so that the compiler can use the tokenizer and the
artifact format without importing numpy and the encoder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from site_knowledge.retrieval.artifact import ArtifactError

if TYPE_CHECKING:
    from site_knowledge.embedding import Encoder
    from site_knowledge.retrieval.index import Hit, KnowledgeIndex, SearchResult

__all__ = ["ArtifactError", "Hit", "KnowledgeIndex", "SearchResult", "load_index"]


def load_index(path: Path, encoder: Encoder | None = None) -> KnowledgeIndex:
    """Load and validate an artifact (file or built site folder) for search."""
    from site_knowledge.retrieval.index import KnowledgeIndex

    return KnowledgeIndex.load(Path(path), encoder)


def __getattr__(name: str) -> Any:
    if name in ("Hit", "KnowledgeIndex", "SearchResult"):
        from site_knowledge.retrieval import index

        return getattr(index, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
