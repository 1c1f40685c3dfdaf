"""The shards memo: a build of the same artifact copies the shards an earlier one cut, with its
own ``built_at``; another artifact, other sizes or an incomplete memo cut them again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_compiler_shards import FIXTURE, SMALL, WHOLE

from site_knowledge.compiler.shard_cache import INDEX, KEEP, PREFIX, ShardMemo
from site_knowledge.compiler.shards import MANIFEST_NAME, SHARD_DIR, write_layout


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site" / "site-knowledge"
    shutil.copytree(FIXTURE, folder)
    return folder


def layout(site: Path) -> dict[str, bytes]:
    """The sharded layout's files by name, the manifest without its ``built_at``."""
    manifest = json.loads((site / MANIFEST_NAME).read_text(encoding="utf-8"))
    manifest.pop("built_at")
    files = {p.name: p.read_bytes() for p in (site / SHARD_DIR).iterdir()}
    return {MANIFEST_NAME: json.dumps(manifest, sort_keys=True).encode(), **files}


def unreadable(site: Path) -> None:
    """Spoil the artifact: only a build that cuts the shards again reads it."""
    (site / "site-knowledge.json").write_text("{not json", encoding="utf-8")


def rebuilt(site: Path) -> Path:
    """The output folder emptied as ``mkdocs build`` empties it, the artifact kept."""
    shutil.rmtree(site / SHARD_DIR)
    (site / MANIFEST_NAME).unlink()
    return site


def test_a_second_build_of_the_same_artifact_copies_the_memoised_shards(
        site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = write_layout(site / "site-knowledge.json", True, SMALL,
                         ShardMemo(cache, "artifact-a", "2026-12-05T10:00:00Z"))
    cut = layout(site)
    unreadable(rebuilt(site))
    again = write_layout(site / "site-knowledge.json", True, SMALL,
                         ShardMemo(cache, "artifact-a", "2026-12-05T11:00:00Z"))
    assert again == first
    assert layout(site) == cut
    manifest = json.loads((site / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["built_at"] == "2026-12-05T11:00:00Z"


@pytest.mark.parametrize("key, sizes", [("artifact-b", SMALL), ("artifact-a", WHOLE)],
                         ids=["another artifact", "other sizes"])
def test_another_artifact_or_other_sizes_cut_again(site: Path, tmp_path: Path, key: str,
                                                   sizes: object) -> None:
    cache = tmp_path / "cache"
    write_layout(site / "site-knowledge.json", True, SMALL, ShardMemo(cache, "artifact-a", "t"))
    unreadable(rebuilt(site))
    with pytest.raises(json.JSONDecodeError):
        write_layout(site / "site-knowledge.json", True, sizes,  # type: ignore[arg-type]
                     ShardMemo(cache, key, "t"))


def test_a_memo_missing_a_shard_is_not_read(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    memo = ShardMemo(cache, "artifact-a", "t")
    write_layout(site / "site-knowledge.json", True, SMALL, memo)
    cut = layout(site)
    (folder,) = cache.glob(f"{PREFIX}*")
    next(p for p in folder.iterdir() if p.name != INDEX).unlink()
    write_layout(rebuilt(site) / "site-knowledge.json", True, SMALL, memo)
    assert layout(site) == cut
    assert len([p for p in folder.iterdir() if p.name != INDEX]) == len(cut) - 1


def test_only_the_most_recently_used_memos_are_kept(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    folders: list[str] = []
    for n in range(KEEP + 2):
        before = {p.name for p in cache.glob(f"{PREFIX}*")}
        write_layout(site / "site-knowledge.json", True, SMALL,
                     ShardMemo(cache, f"artifact-{n}", "t"))
        (made,) = {p.name for p in cache.glob(f"{PREFIX}*")} - before
        folders.append(made)
    assert {p.name for p in cache.glob(f"{PREFIX}*")} == set(folders[-KEEP:])
