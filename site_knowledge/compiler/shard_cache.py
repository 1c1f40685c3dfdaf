"""Shards memo: a build whose artifact is the memo's copies the shards it cut last time.

Cutting the shards re-tokenizes every passage and, on a large site, runs k-means over the
vectors; on a warm build of an unchanged site that is most of the plugin's time. The shards
depend only on the artifact (named by the whole-build memo's input key), the shard sizes and
this code, so they are kept in the embedding cache folder under that key: the manifest with
the list of its files, written last, so that a memo missing it is never read.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIX = "shards-"
KEEP = 2
"""Shard memos kept: the newest few, since a large site's shards are as big as its artifact."""
INDEX = "memo.json"


@dataclass(frozen=True)
class ShardMemo:
    """Where a build's shards are memoised and what names them."""

    directory: Path
    """The embedding cache folder (the whole-build memo's)."""
    artifact_key: str
    """The whole-build memo's input key of the artifact being sharded."""
    built_at: str
    """The artifact's ``built_at``, written into a memoised manifest."""

    def folder(self, variant: str) -> Path:
        """The memo's folder for this artifact cut as ``variant`` says (sizes and schema)."""
        rendered = json.dumps([self.artifact_key, variant])
        return self.directory / f"{PREFIX}{hashlib.sha256(rendered.encode()).hexdigest()[:32]}"

    def load(self, variant: str) -> tuple[dict[str, Any], dict[str, Path]] | None:
        """The memoised manifest (with this build's ``built_at``) and each shard's file, by its
        path under the output folder; None when there is no complete memo."""
        folder = self.folder(variant)
        try:
            index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        files = {name: folder / Path(name).name for name in index["files"]}
        if not all(path.is_file() for path in files.values()):
            return None
        (folder / INDEX).touch()
        manifest: dict[str, Any] = index["manifest"]
        manifest["built_at"] = self.built_at
        return manifest, files

    def store(self, variant: str, manifest: dict[str, Any], files: dict[str, bytes]) -> None:
        """Memoise a cut; keep the `KEEP` most recently used."""
        folder = self.folder(variant)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name, blob in files.items():
            (folder / Path(name).name).write_bytes(blob)
        index = json.dumps({"manifest": manifest, "files": sorted(files)}, ensure_ascii=False)
        partial = folder / f"{INDEX}.tmp"
        partial.write_text(index, encoding="utf-8")
        partial.replace(folder / INDEX)
        memos = sorted(self.directory.glob(f"{PREFIX}*"), key=_last_used)
        for stale in memos[:-KEEP]:
            shutil.rmtree(stale, ignore_errors=True)


def _last_used(folder: Path) -> float:
    """When a memo was last stored or read; a folder a build left unfinished counts as oldest."""
    try:
        return (folder / INDEX).stat().st_mtime
    except OSError:
        return 0.0
