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


DELTA_SHARE = 0.1
"""The share of the cache's vectors the delta file may hold before it is merged."""


class EmbeddingCache:
    """Maps ``sha256(weights, text)`` to a vector; an unchanged passage is never re-embedded.

    Lives across ``mkdocs serve`` rebuilds in the plugin object. On disk it is a ``.npz`` file
    under the cache folder and a smaller one of the vectors added since that file was last
    written (``.delta.npz``), so a rebuild after editing a page rewrites a few vectors, not the
    whole cache; the two are merged once the delta holds over `DELTA_SHARE` of the vectors.
    Both are written atomically and read on the first ``embed``, so a build that reuses its
    whole previous result never reads them.
    """

    def __init__(self, encoder: Encoder, cache_dir: Path) -> None:
        self.encoder = encoder
        self.directory = cache_dir
        self.path = cache_dir / f"embeddings-{encoder.weights_sha256[:16]}.npz"
        self.delta_path = self.path.with_suffix(".delta.npz")
        self._vectors: dict[str, FloatMatrix] = {}
        self._loaded = False
        self.hits = 0
        self.misses = 0
        self._unsaved: set[str] = set()
        self._delta: set[str] = set()
        """Keys in the delta file and not in the main one."""
        self._keys: dict[str, str] = {}
        """Each text's key, hashed once until the next save (a site repeats passages)."""

    def _load(self) -> None:
        self._loaded = True
        self._vectors = _read(self.path)
        delta = _read(self.delta_path)
        self._vectors.update(delta)
        self._delta = set(delta)

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
        if not keys:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        return np.stack([self._vectors[key] for key in keys]).astype(np.float32, copy=False)

    def embedded_since_save(self, texts: Sequence[str]) -> int:
        """How many of ``texts`` were embedded since the last ``save``, by a prefetch or not."""
        return len({self._key(text) for text in texts} & self._unsaved)

    def save(self) -> None:
        """Write what was embedded since the last save: into the delta file, or into the main
        file (the delta then removed) once the delta would hold over `DELTA_SHARE`."""
        self._keys.clear()
        if not self._unsaved:
            return
        delta = self._delta | self._unsaved
        if len(delta) > DELTA_SHARE * len(self._vectors):
            _write(self.path, self._vectors)
            self.delta_path.unlink(missing_ok=True)
            self._delta = set()
        else:
            _write(self.delta_path, {key: self._vectors[key] for key in delta})
            self._delta = delta
        self._unsaved.clear()


def _read(path: Path) -> dict[str, FloatMatrix]:
    """The vectors of one cache file by key; none for a missing or unreadable file."""
    import numpy as np

    if not path.exists():
        return {}
    try:
        with np.load(path) as data:
            keys, matrix = data["keys"], data["vectors"]
    except (OSError, ValueError, KeyError, EOFError):
        return {}
    if matrix.ndim != 2 or matrix.shape[1] != DIMENSION:
        return {}
    return {str(key): matrix[i] for i, key in enumerate(keys)}


def _write(path: Path, vectors: dict[str, FloatMatrix]) -> None:
    """Write ``vectors`` to ``path`` atomically."""
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name.removesuffix('.npz')}.{os.getpid()}.tmp.npz")
    np.savez(partial, keys=np.array(list(vectors), dtype="U64"),
             vectors=np.stack(list(vectors.values())).astype(np.float32))
    partial.replace(path)
