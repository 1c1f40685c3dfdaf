"""int8 passage vectors with a float32 scale per row (SPEC.md, "Vectors sidecar")."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

LAYOUT = "int8-rows+float32le-scales"
Float32Matrix = npt.NDArray[np.float32]


def quantize(vectors: Float32Matrix) -> bytes:
    """Encode unit vectors as int8 rows then little-endian float32 scales."""
    peaks = np.abs(vectors).max(axis=1)
    scales = np.where(peaks > 0, peaks / 127.0, 1.0).astype(np.float32)
    scaled = vectors / scales[:, None]
    np.rint(scaled, out=scaled)
    rows = np.clip(scaled, -127, 127, out=scaled).astype(np.int8)
    return rows.tobytes() + scales.astype("<f4").tobytes()


def dequantize(blob: bytes, count: int, dimension: int) -> Float32Matrix:
    """Decode a sidecar back to a ``(count, dimension)`` float32 matrix."""
    expected = count * dimension + 4 * count
    if len(blob) != expected:
        raise ValueError(f"vectors sidecar has {len(blob)} bytes, expected {expected}")
    rows = np.frombuffer(blob, dtype=np.int8, count=count * dimension).reshape(count, dimension)
    scales = np.frombuffer(blob, dtype="<f4", count=count, offset=count * dimension)
    return (rows.astype(np.float32) * scales[:, None]).astype(np.float32)


def mean_unit_rows(vectors: Float32Matrix, groups: npt.NDArray[np.int64], size: int) -> Float32Matrix:
    """L2-normalised mean of the rows in each group (a page vector per source)."""
    sums = np.zeros((size, vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, groups, vectors)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return (sums / np.maximum(norms, 1e-12)).astype(np.float32)
