"""Model file verification: a mismatch is an installation error, never a silent substitute."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


class ModelVerificationError(Exception):
    """The model file is missing or its SHA-256 differs from the pinned one."""


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def verify_model(path: Path, expected_sha256: str) -> str:
    """Check ``path`` against ``expected_sha256``.

    Returns:
        The verified digest.

    Raises:
        ModelVerificationError: missing file, malformed digest, or mismatch.
    """
    expected = expected_sha256.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise ModelVerificationError("the expected SHA-256 must be 64 hex digits")
    if not path.is_file():
        raise ModelVerificationError(f"model file not found: {path}")
    actual = sha256_file(path)
    if actual != expected:
        raise ModelVerificationError(
            f"model SHA-256 mismatch for {path.name}: expected {expected}, got {actual}"
        )
    return actual
