"""Validate and write the artifact atomically: the sidecar first, then the JSON by rename."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from site_knowledge.build.model import BuildError
from site_knowledge.retrieval.artifact import ARTIFACT_NAME, ArtifactError, validate_artifact
from site_knowledge.retrieval.artifact_form import FormError, compact

SIDECAR_PREFIX = "site-knowledge."
SIDECAR_SUFFIX = ".vectors.bin"


def write_artifact(document: dict[str, Any], vectors_blob: bytes, output_dir: Path) -> tuple[Path, int]:
    """Validate an expanded document in its compact form and write it with its vectors.

    Returns:
        The artifact's path and its size in bytes.

    Raises:
        BuildError: the document does not validate; nothing is written.
    """
    return write_prepared(prepare_artifact(document, vectors_blob), vectors_blob, output_dir)


def prepare_artifact(document: dict[str, Any], vectors_blob: bytes) -> dict[str, Any]:
    """The compact, validated form of an expanded document, naming its vectors sidecar.

    Raises:
        BuildError: the document does not validate or cannot be written compactly.
    """
    digest = hashlib.sha256(vectors_blob).hexdigest()
    document["vectors"]["file"] = f"{SIDECAR_PREFIX}{digest[:16]}{SIDECAR_SUFFIX}"
    document["vectors"]["sha256"] = digest
    try:
        on_disk = compact(document)
        validate_artifact(on_disk)
    except (ArtifactError, FormError) as error:
        raise BuildError(ARTIFACT_NAME, str(error)) from None
    return on_disk


def write_prepared(on_disk: dict[str, Any], vectors_blob: bytes, output_dir: Path) -> tuple[Path, int]:
    """Write ``site-knowledge.json`` from :func:`prepare_artifact`'s result, and its sidecar.

    The sidecar's name carries its hash, so a JSON already in place keeps pointing at its own
    sidecar until the new JSON replaces it by an atomic rename; an interrupted write leaves
    the previous artifact whole. Stale sidecars are removed afterwards.

    Returns:
        The artifact's path and its size in bytes.
    """
    sidecar_name = on_disk["vectors"]["file"]
    payload = json.dumps(on_disk, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    output_dir.mkdir(parents=True, exist_ok=True)
    _atomic_write(output_dir / sidecar_name, vectors_blob)
    artifact_path = output_dir / ARTIFACT_NAME
    _atomic_write(artifact_path, payload)
    for stale in output_dir.glob(f"{SIDECAR_PREFIX}*{SIDECAR_SUFFIX}"):
        if stale.name != sidecar_name:
            stale.unlink(missing_ok=True)
    return artifact_path, len(payload)


def _atomic_write(path: Path, data: bytes) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with partial.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
