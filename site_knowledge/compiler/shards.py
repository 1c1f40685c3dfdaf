"""The sharded artifact: the box's input for a large site, fetched piece by piece (SHARDS.md).

Beside ``site-knowledge.json`` (the gateway still reads the whole), a small manifest names
content-named shards under ``shards/``: the lexical index cut into ranges of folded terms
and the passages' texts in fragments of whole sources. The box reads the vectors sidecar
whole, so its dense ranking is the single file's; only above ``whole_rows_bytes`` are the
vectors cut into k-means partitions whose centroids the box compares with a question to
fetch only the nearest (an approximate ranking, see docs/sharded.md).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from site_knowledge.compiler.model import BuildError
from site_knowledge.compiler.shard_cache import ShardMemo
from site_knowledge.compiler.writer import atomic_write
from site_knowledge.retrieval.artifact_form import expand
from site_knowledge.retrieval.tokenizer import indexed_text, tokenize
from site_knowledge.retrieval.words import fold

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SHARDS_SCHEMA = "site-knowledge-shards/1"
MANIFEST_NAME = "site-knowledge.shards.json"
SHARD_DIR = "shards"
KMEANS_ROUNDS = 12


@dataclass(frozen=True)
class ShardSizes:
    """How the artifact is cut: bytes per lexical shard and text fragment; up to
    ``whole_rows_bytes`` of vectors the box reads the vectors sidecar whole (the single file's
    exact ranking), above it k-means partitions of ``partition_rows`` passages of which it
    opens the ``probes`` nearest each query vector."""

    lexical_bytes: int = 8_000
    fragment_bytes: int = 8_000
    whole_rows_bytes: int = 8 * 1048576
    partition_rows: int = 128
    probes: int = 8

    def __post_init__(self) -> None:
        for name in ("lexical_bytes", "fragment_bytes", "partition_rows", "probes"):
            if getattr(self, name) < 1:
                raise BuildError(MANIFEST_NAME, f"shard size {name} must be at least 1, "
                                                f"not {getattr(self, name)}")


def shard_artifact(on_disk: dict[str, Any], vectors: bytes,
                   sizes: ShardSizes = ShardSizes()) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Cut a compact, validated artifact and its vectors sidecar into shards.

    Returns:
        The manifest and the shard files, by their path under the output folder.

    Raises:
        BuildError: the vectors do not match the passages, or a source is too long to index.
    """
    # numpy loads here, not at import: the plugin names MANIFEST_NAME on every build.
    import numpy as np

    from site_knowledge.retrieval.vectors import dequantize

    document = expand(on_disk)
    sources, passages = document["sources"], document["passages"]
    if not passages:
        raise BuildError(MANIFEST_NAME, "the site has no passages to shard")
    dimension = on_disk["vectors"]["dimension"]
    try:
        rows = dequantize(vectors, len(passages), dimension)
    except ValueError as error:
        raise BuildError(MANIFEST_NAME, str(error)) from None
    index_of = {source["id"]: i for i, source in enumerate(sources)}
    source_of = np.array([index_of[p["source"]] for p in passages], dtype=np.int64)
    stopwords = frozenset(on_disk["lexical"]["stopwords"])
    docs = [tokenize(indexed_text(sources[s]["title"], p["heading"], p["text"]), stopwords)
            for p, s in zip(passages, source_of.tolist(), strict=True)]
    files: dict[str, bytes] = {}
    lexical = _lexical_shards(docs, sizes, files)
    fragments = _fragments(on_disk["sources"], sizes, files)
    dense = ({"rows": on_disk["vectors"]["file"]} if len(vectors) <= sizes.whole_rows_bytes
             else _partitions(vectors, rows, source_of, len(sources), sizes, files))
    manifest = {key: value for key, value in on_disk.items() if key not in ("sources", "vectors")}
    manifest["schema"] = SHARDS_SCHEMA
    manifest["artifact_schema"] = on_disk["schema"]
    manifest["counts"] = {"sources": len(sources), "passages": len(passages),
                          "per_source": np.bincount(source_of, minlength=len(sources)).tolist()}
    manifest["authority"] = {kind: [i for i, s in enumerate(sources) if s["authority"] == kind]
                             for kind in ("fact", "fiction")}
    manifest["ontology"] = [i for i, s in enumerate(sources) if s["kind"] == "ontology"]
    langs = [source["lang"] for source in sources]
    if len(set(langs) - {""}) > 1:
        manifest["source_langs"] = langs
    manifest["shards"] = {"lexical": lexical, "text": fragments, "dense": dense}
    return manifest, files


def install_shards(manifest: dict[str, Any], files: Mapping[str, bytes | Path],
                   output_dir: Path) -> int:
    """Write the shards (each given as its bytes or a file to copy), then the manifest by
    atomic rename, then remove stale shards.

    A manifest in place keeps naming its own shards until the new one replaces it.

    Returns:
        The bytes of the layout, manifest and shards together.
    """
    folder = output_dir / SHARD_DIR
    folder.mkdir(parents=True, exist_ok=True)
    size = 0
    for name, blob in files.items():
        target = output_dir / name
        size += len(blob) if isinstance(blob, bytes) else blob.stat().st_size
        if not target.exists():
            atomic_write(target, blob if isinstance(blob, bytes) else blob.read_bytes())
    payload = _json(manifest)
    atomic_write(output_dir / MANIFEST_NAME, payload)
    for stale in folder.iterdir():
        if f"{SHARD_DIR}/{stale.name}" not in files:
            stale.unlink()
    return len(payload) + size


def write_layout(artifact_path: Path, sharded: bool, sizes: ShardSizes = ShardSizes(),
                 memo: ShardMemo | None = None) -> int:
    """Shard the artifact just written at ``artifact_path`` (with its vectors sidecar), or
    remove the shards an earlier build left when the site is one file. With ``memo``, shards
    cut for the same artifact by an earlier build are copied instead of cut again.

    Returns:
        The bytes of the sharded layout, 0 for one file.
    """
    output_dir = artifact_path.parent
    if not sharded:
        remove_shards(output_dir)
        return 0
    variant = json.dumps([asdict(sizes), SHARDS_SCHEMA], sort_keys=True)
    memoised = memo.load(variant) if memo is not None else None
    if memoised is not None:
        return install_shards(*memoised, output_dir)
    on_disk = json.loads(artifact_path.read_text(encoding="utf-8"))
    vectors = (output_dir / on_disk["vectors"]["file"]).read_bytes()
    manifest, files = shard_artifact(on_disk, vectors, sizes)
    if memo is not None:
        memo.store(variant, manifest, files)
    return install_shards(manifest, files, output_dir)


def remove_shards(output_dir: Path) -> None:
    """Remove a sharded layout an earlier build left (the site is now one file)."""
    (output_dir / MANIFEST_NAME).unlink(missing_ok=True)
    shutil.rmtree(output_dir / SHARD_DIR, ignore_errors=True)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _put(files: dict[str, bytes], kind: str, blob: bytes) -> str:
    name = f"{SHARD_DIR}/{hashlib.sha256(blob).hexdigest()[:16]}.{kind}"
    files[name] = blob
    return name


def _utf16(text: str) -> bytes:
    """The order JavaScript compares strings in (UTF-16 code units)."""
    return text.encode("utf-16-be")


def _deltas(values: Sequence[int]) -> list[int]:
    return [value - (values[i - 1] if i else 0) for i, value in enumerate(values)]


def _lexical_shards(docs: list[list[str]], sizes: ShardSizes,
                    files: dict[str, bytes]) -> dict[str, Any]:
    """Term ranges of postings (per term, its passages as deltas and its counts there) and
    the passages' lengths apart: a reader sums a page's counts and lengths over its passages
    (passages are in source order) and computes BM25 exactly as from the whole. Shards are
    cut between folded terms."""
    postings: dict[str, tuple[list[int], list[int]]] = {}
    for index, doc in enumerate(docs):
        for term, tf in Counter(doc).items():
            rows, tfs = postings.setdefault(term, ([], []))
            rows.append(index)
            tfs.append(tf)
    terms = sorted(postings, key=lambda t: (_utf16(fold(t)), _utf16(t)))
    shards: list[list[list[Any]]] = [[]]
    firsts = [fold(terms[0])] if terms else []
    size = 0
    for term in terms:
        key = fold(term)
        if size >= sizes.lexical_bytes and key != fold(shards[-1][-1][0]):
            shards.append([])
            firsts.append(key)
            size = 0
        rows, tfs = postings[term]
        entry = [term, _deltas(rows), tfs]
        shards[-1].append(entry)
        size += len(_json(entry))
    names = [_put(files, "lexical.json", _json(shard)) for shard in shards if shard]
    lengths = _put(files, "lengths.json", _json([len(doc) for doc in docs]))
    return {"files": names, "first": firsts, "lengths": lengths, "passages": len(docs),
            "tokens": sum(len(doc) for doc in docs)}


def _fragments(compact_sources: list[dict[str, Any]], sizes: ShardSizes,
               files: dict[str, bytes]) -> dict[str, Any]:
    """Whole compact sources in fragments of about ``fragment_bytes``, in source order."""
    names: list[str] = []
    first_source: list[int] = []
    first_passage: list[int] = []
    group: list[dict[str, Any]] = []
    size = 0
    passage = 0

    def close() -> None:
        names.append(_put(files, "text.json", _json(group)))

    for index, source in enumerate(compact_sources):
        if not group or size >= sizes.fragment_bytes:
            if group:
                close()
            group, size = [], 0
            first_source.append(index)
            first_passage.append(passage)
        group.append(source)
        size += len(_json(source))
        passage += sum(isinstance(item, str) for item in source["passages"])
    if group:
        close()
    return {"files": names, "first_source": first_source, "first_passage": first_passage}


def _partitions(vectors: bytes, rows: npt.NDArray[np.float32], source_of: npt.NDArray[np.int64],
                source_count: int, sizes: ShardSizes, files: dict[str, bytes]) -> dict[str, Any]:
    """Spherical k-means partitions of the passages' rows, and the page vectors apart.

    A partition (little-endian): uint32 passage count n; n passage indices; the n rows laid
    out as the vectors sidecar (int8 rows, then float32 scales), the sidecar's
    own bytes. The pages file holds every page vector, quantized as rows are.
    """
    import numpy as np

    from site_knowledge.retrieval.vectors import mean_unit_rows, quantize

    count, dimension = rows.shape
    q_rows = np.frombuffer(vectors, dtype=np.int8, count=count * dimension).reshape(count, dimension)
    scales = np.frombuffer(vectors, dtype="<f4", count=count, offset=count * dimension)
    centroids = _kmeans(rows, max(1, min(count, round(count / sizes.partition_rows))))
    member = np.argmax(rows @ centroids.T, axis=1)
    names = []
    for part in range(len(centroids)):
        ids = np.flatnonzero(member == part)
        blob = b"".join([
            np.array([len(ids)], dtype="<u4").tobytes(),
            ids.astype("<u4").tobytes(),
            q_rows[ids].tobytes(), scales[ids].tobytes(),
        ])
        names.append(_put(files, "dense.bin", blob))
    pages = quantize(mean_unit_rows(rows, source_of, source_count))
    return {"centroids": _put(files, "centroids.bin", quantize(centroids)), "files": names,
            "pages": _put(files, "pages.bin", pages), "probes": min(sizes.probes, len(names))}


def _kmeans(rows: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.float32]:
    """Spherical k-means from evenly spaced rows (deterministic); empty clusters keep their
    centroid."""
    import numpy as np

    centroids = rows[np.linspace(0, len(rows) - 1, k).astype(np.int64)].copy()
    for _ in range(KMEANS_ROUNDS):
        member = np.argmax(rows @ centroids.T, axis=1)
        sums = np.zeros_like(centroids, dtype=np.float64)
        np.add.at(sums, member, rows)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        filled = norms[:, 0] > 0
        centroids[filled] = (sums[filled] / norms[filled]).astype(np.float32)
    return centroids
