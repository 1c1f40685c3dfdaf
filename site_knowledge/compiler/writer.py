"""Validate and write the artifact atomically: the sidecars first, then the JSON by rename."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
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

    @functools.cached_property
    def digests(self) -> dict[str, str]:
        """Each sidecar's SHA-256 by its kind (``vectors``, ``elsewhere``), hashed once."""
        return {"vectors": hashlib.sha256(self.vectors).hexdigest(),
                "elsewhere": hashlib.sha256(self.elsewhere).hexdigest()}

    def named(self) -> dict[str, bytes]:
        """Each sidecar under its file name, which carries its content hash."""
        return {sidecar_name(self.digests["vectors"], "vectors"): self.vectors,
                sidecar_name(self.digests["elsewhere"], "elsewhere"): self.elsewhere}


def sidecar_name(digest: str, kind: str) -> str:
    """The file name the artifact gives a sidecar of ``kind`` whose SHA-256 is ``digest``."""
    return f"{SIDECAR_PREFIX}{digest[:16]}.{kind}{SIDECAR_SUFFIX}"


def write_artifact(document: dict[str, Any], sidecars: Sidecars, output_dir: Path) -> tuple[Path, int]:
    """Validate an expanded document in its compact form and write it with its sidecars.

    Returns:
        The artifact's path and its size in bytes.

    Raises:
        BuildError: the document does not validate; nothing is written.
    """
    return write_prepared(serialized(prepare_artifact(document, sidecars)), sidecars, output_dir)


def prepare_artifact(document: dict[str, Any], sidecars: Sidecars) -> dict[str, Any]:
    """The compact, validated form of an expanded document, naming its sidecars by content.

    Raises:
        BuildError: the document does not validate or cannot be written compactly.
    """
    for entry, kind in ((document["vectors"], "vectors"),
                        (document["gate"]["elsewhere"], "elsewhere")):
        entry["file"] = sidecar_name(sidecars.digests[kind], kind)
        entry["sha256"] = sidecars.digests[kind]
    try:
        on_disk = compact(document)
        validate_artifact(on_disk)
    except (ArtifactError, FormError) as error:
        raise BuildError(ARTIFACT_NAME, str(error)) from None
    return on_disk


def serialized(on_disk: dict[str, Any]) -> bytes:
    """``site-knowledge.json``'s bytes for a document in the compact form."""
    return json.dumps(on_disk, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


BUILT_AT = re.compile(rb'"built_at":"[^"]*"')


def with_built_at(payload: bytes, built_at: str) -> bytes:
    """The serialized artifact with another build time: the first ``"built_at"`` key is the
    document's own (a passage's text is escaped inside a string and cannot match)."""
    return BUILT_AT.sub(f'"built_at":"{built_at}"'.encode(), payload, count=1)


def write_prepared(payload: bytes, sidecars: Sidecars, output_dir: Path) -> tuple[Path, int]:
    """Write ``site-knowledge.json`` (``payload``, `serialized`) and its sidecars.

    The sidecars' names carry their hashes, so a JSON already in place keeps pointing at its
    own sidecars until the new JSON replaces it by an atomic rename; an interrupted write
    leaves the previous artifact whole. Stale sidecars are removed afterwards.

    Returns:
        The artifact's path and its size in bytes.
    """
    named = sidecars.named()
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
