"""Query-time retrieval over a knowledge artifact (the Python twin of the browser's search)."""

from __future__ import annotations

from pathlib import Path

from site_knowledge.embedding import Encoder
from site_knowledge.retrieval.artifact import ArtifactError
from site_knowledge.retrieval.index import Hit, KnowledgeIndex, SearchResult

__all__ = ["ArtifactError", "Hit", "KnowledgeIndex", "SearchResult", "load_index"]


def load_index(path: Path, encoder: Encoder | None = None) -> KnowledgeIndex:
    """Load and validate an artifact (file or built site folder) for search."""
    return KnowledgeIndex.load(Path(path), encoder)
