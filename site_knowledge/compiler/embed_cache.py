"""Embeddings cached by content hash, in memory and in one file on disk."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from site_knowledge.embedding import DIMENSION, Encoder

if TYPE_CHECKING:
    from site_knowledge.embedding import FloatMatrix


class EmbeddingCache:
    """Maps ``sha256(weights, text)`` to a vector; an unchanged passage is never re-embedded.

    Lives across ``mkdocs serve`` rebuilds in the plugin object; ``save`` merges into a
    ``.npz`` file under the cache folder, written atomically. The file is read on the first
    ``embed``, so a build that reuses its whole previous result never reads it.
    """

    def __init__(self, encoder: Encoder, cache_dir: Path) -> None:
        self.encoder = encoder
        self.directory = cache_dir
        self.path = cache_dir / f"embeddings-{encoder.weights_sha256[:16]}.npz"
        self._vectors: dict[str, FloatMatrix] = {}
        self._loaded = False
        self.hits = 0
        self.misses = 0
        self._unsaved: set[str] = set()
        self._keys: dict[str, str] = {}
        """Each text's key, hashed once until the next save (a site repeats passages)."""

    def _load(self) -> None:
        import numpy as np

        self._loaded = True
        if not self.path.exists():
            return
        try:
            with np.load(self.path) as data:
                keys, matrix = data["keys"], data["vectors"]
        except (OSError, ValueError, KeyError):
            return
        if matrix.ndim == 2 and matrix.shape[1] == DIMENSION:
            self._vectors = {str(key): matrix[i] for i, key in enumerate(keys)}

    def _key(self, text: str) -> str:
        key = self._keys.get(text)
        if key is None:
            key = self._keys[text] = hashlib.sha256(
                f"{self.encoder.identity}\n{text}".encode()).hexdigest()
        return key

    def embed(self, texts: Sequence[str],
              progress: Callable[[int, int], Callable[[int], None]] | None = None,
              encoder: Encoder | None = None) -> FloatMatrix:
        """Vectors for texts, embedding only the ones not cached.

        Args:
            texts: texts to embed.
            progress: given (missing, total), returns a per-batch callback for a progress bar.
            encoder: embeds the missing texts instead of the cache's own (same weights).
        """
        import numpy as np

        if not self._loaded:
            self._load()
        keys = [self._key(text) for text in texts]
        missing = sorted({key: i for i, key in enumerate(keys) if key not in self._vectors}.values())
        self.misses += len(missing)
        self._unsaved.update(keys[i] for i in missing)
        self.hits += len(texts) - len(missing)
        if missing:
            callback = progress(len(missing), len(texts)) if progress else None
            fresh = (encoder or self.encoder).encode([texts[i] for i in missing], callback)
            for row, index in enumerate(missing):
                self._vectors[keys[index]] = fresh[row]
        result = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        for i, key in enumerate(keys):
            result[i] = self._vectors[key]
        return result

    def embedded_since_save(self, texts: Sequence[str]) -> int:
        """How many of ``texts`` were embedded since the last ``save``, by a prefetch or not."""
        return len({self._key(text) for text in texts} & self._unsaved)

    def save(self) -> None:
        """Write the cache to disk if anything new was embedded."""
        self._keys.clear()
        if not self._unsaved:
            return
        import numpy as np

        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npz")
        keys = np.array(list(self._vectors), dtype="U64")
        matrix = np.stack(list(self._vectors.values())).astype(np.float32)
        np.savez(partial, keys=keys, vectors=matrix)
        partial.replace(self.path)
        self._unsaved.clear()
