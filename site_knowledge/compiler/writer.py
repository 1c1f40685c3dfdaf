"""Validate and write the artifact atomically: the sidecars first, then the JSON by rename."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from site_knowledge.compiler.model import BuildError
from site_knowledge.retrieval.artifact import ARTIFACT_NAME, ArtifactError, validate_artifact
from site_knowledge.retrieval.artifact_form import FormError, compact

SIDECAR_PREFIX = "site-knowledge."
SIDECAR_SUFFIX = ".bin"


@dataclass(frozen=True)
class Sidecars:
    """The binary files the JSON names: the passages' vectors and the gate's reference
    vectors of questions from elsewhere (the same bytes for every site)."""

    vectors: bytes
    elsewhere: bytes

    def named(self, on_disk: dict[str, Any]) -> dict[str, bytes]:
        """Each sidecar under the file name the compact document gives it."""
        return {on_disk["vectors"]["file"]: self.vectors,
                on_disk["gate"]["elsewhere"]["file"]: self.elsewhere}


def write_artifact(document: dict[str, Any], sidecars: Sidecars, output_dir: Path) -> tuple[Path, int]:
    """Validate an expanded document in its compact form and write it with its sidecars.

    Returns:
        The artifact's path and its size in bytes.

    Raises:
        BuildError: the document does not validate; nothing is written.
    """
    return write_prepared(prepare_artifact(document, sidecars), sidecars, output_dir)


def prepare_artifact(document: dict[str, Any], sidecars: Sidecars) -> dict[str, Any]:
    """The compact, validated form of an expanded document, naming its sidecars by content.

    Raises:
        BuildError: the document does not validate or cannot be written compactly.
    """
    for entry, blob, kind in ((document["vectors"], sidecars.vectors, "vectors"),
                              (document["gate"]["elsewhere"], sidecars.elsewhere, "elsewhere")):
        digest = hashlib.sha256(blob).hexdigest()
        entry["file"] = f"{SIDECAR_PREFIX}{digest[:16]}.{kind}{SIDECAR_SUFFIX}"
        entry["sha256"] = digest
    try:
        on_disk = compact(document)
        validate_artifact(on_disk)
    except (ArtifactError, FormError) as error:
        raise BuildError(ARTIFACT_NAME, str(error)) from None
    return on_disk


def write_prepared(on_disk: dict[str, Any], sidecars: Sidecars, output_dir: Path) -> tuple[Path, int]:
    """Write ``site-knowledge.json`` from :func:`prepare_artifact`'s result, and its sidecars.

    The sidecars' names carry their hashes, so a JSON already in place keeps pointing at its
    own sidecars until the new JSON replaces it by an atomic rename; an interrupted write
    leaves the previous artifact whole. Stale sidecars are removed afterwards.

    Returns:
        The artifact's path and its size in bytes.
    """
    named = sidecars.named(on_disk)
    payload = json.dumps(on_disk, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    output_dir.mkdir(parents=True, exist_ok=True)
    for name, blob in named.items():
        atomic_write(output_dir / name, blob)
    artifact_path = output_dir / ARTIFACT_NAME
    atomic_write(artifact_path, payload)
    for stale in output_dir.glob(f"{SIDECAR_PREFIX}*{SIDECAR_SUFFIX}"):
        if stale.name not in named:
            stale.unlink(missing_ok=True)
    return artifact_path, len(payload)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it into place."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with partial.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
