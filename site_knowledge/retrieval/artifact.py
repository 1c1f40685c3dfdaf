"""Load and validate a knowledge artifact and its vectors sidecar.

The file is the compact form (:mod:`site_knowledge.retrieval.artifact_form`); what a reader gets
is the expanded document, with flat ``sources`` and ``passages`` lists.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from site_knowledge.retrieval.artifact_form import SCHEMA_VERSION, FormError, expand
from site_knowledge.retrieval.tokenizer import TOKENIZER_VERSION

OLDER_SCHEMAS = ("site-knowledge/1",)
OLDER_TOKENIZERS = ("sk-words/1",)
ARTIFACT_NAME = "site-knowledge.json"
DEFAULT_DIR = "assets/site-knowledge"


class ArtifactError(ValueError):
    """The artifact is missing, malformed, or not one this reader can use."""


@cache
def artifact_schema() -> dict[str, Any]:
    """The artifact's JSON Schema, shipped with the package."""
    text = resources.files("site_knowledge.retrieval").joinpath("artifact.schema.json")
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return schema


@cache
def _fast_validator() -> Any:
    """The artifact schema compiled by jsonschema-rs, which passes a valid artifact about a
    hundred times faster than jsonschema; formats are not asserted, as jsonschema does not
    assert them without a format checker."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(artifact_schema(), validate_formats=False, offline=True)


@cache
def _schema_validator() -> Any:
    """The artifact schema's validator, its schema checked once (jsonschema loads here: a
    warm build never validates); it names the problem in an artifact the fast one refuses."""
    import jsonschema

    validator = jsonschema.validators.validator_for(artifact_schema())
    validator.check_schema(artifact_schema())
    return validator(artifact_schema())


def validate_artifact(document: dict[str, Any]) -> dict[str, Any]:
    """Check a document in the compact form and return it expanded for readers.

    Checks the schema version, the JSON Schema, and the cross-references the schema cannot
    express (heading references, duplicate ids, the vector count, the gate's rows).

    Raises:
        ArtifactError: naming the first problem found.
    """
    version = document.get("schema")
    if version in OLDER_SCHEMAS:
        raise ArtifactError(f"artifact format {version} is older than this reader's "
                            f"{SCHEMA_VERSION}: rebuild the site (mkdocs build) to update it")
    if version != SCHEMA_VERSION:
        raise ArtifactError(f"unknown artifact schema {version!r} (this reader reads {SCHEMA_VERSION})")
    lexical = document.get("lexical")
    tokenizer = lexical.get("tokenizer") if isinstance(lexical, dict) else None
    if tokenizer in OLDER_TOKENIZERS:
        raise ArtifactError(f"artifact tokenizer {tokenizer} is older than this reader's "
                            f"{TOKENIZER_VERSION}: rebuild the site (mkdocs build) to update it")
    if not _fast_validator().is_valid(document):
        _raise_schema_error(document)
    try:
        expanded = expand(document)
    except FormError as error:
        raise ArtifactError(f"artifact invalid: {error}") from None
    _reject_duplicates("source", [source["id"] for source in expanded["sources"]])
    if document["vectors"]["count"] != len(expanded["passages"]):
        raise ArtifactError("vectors count does not match the number of passages")
    elsewhere = document["gate"]["elsewhere"]
    if any(row >= elsewhere["count"] for row in elsewhere["left_out"]):
        raise ArtifactError(f"gate.elsewhere.left_out names a row beyond its {elsewhere['count']} rows")
    return expanded


def _raise_schema_error(document: dict[str, Any]) -> None:
    """Raise the most relevant schema error of ``document``, as jsonschema words it."""
    from jsonschema.exceptions import best_match

    error = best_match(_schema_validator().iter_errors(document))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        raise ArtifactError(f"artifact invalid at {where}: {error.message[:300]}")


def _reject_duplicates(kind: str, ids: list[str]) -> None:
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise ArtifactError(f"duplicate {kind} id {item!r}")
        seen.add(item)


def resolve_artifact_path(path: Path) -> Path:
    """Accept an artifact file or a built site folder holding one."""
    if path.is_dir():
        candidate = path / DEFAULT_DIR / ARTIFACT_NAME
        if candidate.is_file():
            return candidate
        found = sorted(path.rglob(ARTIFACT_NAME))
        if not found:
            raise ArtifactError(f"{path}: no {ARTIFACT_NAME} in this folder")
        return found[0]
    if not path.is_file():
        raise ArtifactError(f"{path}: no such artifact")
    return path


def load_artifact(path: Path) -> tuple[dict[str, Any], bytes]:
    """Read and validate an artifact; return it expanded, with its verified vectors sidecar.

    The gate's reference file is read and verified too; its bytes become
    ``gate.elsewhere.vectors`` of the expanded document (`gate.decode_elsewhere`).
    """
    artifact_path = resolve_artifact_path(path)
    try:
        document = json.loads(artifact_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArtifactError(f"{artifact_path}: not valid JSON ({error})") from None
    if not isinstance(document, dict):
        raise ArtifactError(f"{artifact_path}: not a JSON object")
    expanded = validate_artifact(document)
    elsewhere = expanded["gate"]["elsewhere"]
    reference = _read_sidecar(artifact_path.parent, elsewhere, "the gate's reference vectors")
    expanded["gate"] = {**expanded["gate"], "elsewhere": {**elsewhere, "vectors": reference}}
    return expanded, _read_sidecar(artifact_path.parent, document["vectors"], "vectors")


def _read_sidecar(folder: Path, entry: dict[str, Any], what: str) -> bytes:
    """A file the artifact names (``file``), checked against its ``sha256``."""
    sidecar = folder / entry["file"]
    try:
        blob = sidecar.read_bytes()
    except OSError as error:
        raise ArtifactError(f"{sidecar}: cannot read {what} ({error.strerror})") from None
    if hashlib.sha256(blob).hexdigest() != entry["sha256"]:
        raise ArtifactError(f"{sidecar}: SHA-256 does not match the artifact")
    return blob
