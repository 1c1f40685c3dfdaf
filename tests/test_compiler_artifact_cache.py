"""The whole-build memo: keys follow every input, entries round-trip, old ones are pruned."""

from __future__ import annotations

import pytest

from site_knowledge.compiler import artifact_cache
from site_knowledge.compiler.compiler import PageInput
from site_knowledge.compiler.writer import Sidecars


def test_key_changes_with_any_input():
    page = PageInput("a.md", "a/", "A", "", "<p>x</p>")
    base = artifact_cache.input_key("v1", [page], {"k": 1})
    assert base == artifact_cache.input_key("v1", [page], {"k": 1})
    edited = PageInput("a.md", "a/", "A", "", "<p>y</p>")
    assert base != artifact_cache.input_key("v1", [edited], {"k": 1})
    assert base != artifact_cache.input_key("v1", [page], {"k": 2})


def test_key_tells_list_items_from_parts():
    page = PageInput("a.md", "a/", "A", "", "<p>x</p>")
    assert artifact_cache.input_key([page, page]) != artifact_cache.input_key([page], [page])
    assert artifact_cache.input_key([page]) != artifact_cache.input_key(page)
    assert artifact_cache.input_key([page]) == artifact_cache.input_key((page,))


def memo(n: int) -> artifact_cache.Memo:
    return artifact_cache.Memo(b'{"n":%d}' % n, Sidecars(bytes([n]), bytes([n, n])), n, 2 * n)


def test_store_load_and_prune(tmp_path):
    assert artifact_cache.load(tmp_path, "0" * 64) is None
    keys = [artifact_cache.input_key(n) for n in range(artifact_cache.KEEP + 2)]
    for n, key in enumerate(keys):
        artifact_cache.store(tmp_path, key, memo(n))
    assert len(list(tmp_path.glob("artifact-*.json"))) == artifact_cache.KEEP
    assert artifact_cache.load(tmp_path, keys[0]) is None
    assert artifact_cache.load(tmp_path, keys[-1]) == memo(artifact_cache.KEEP + 1)
    assert len(list(tmp_path.glob("artifact-*"))) == len(artifact_cache.SUFFIXES) * artifact_cache.KEEP


def test_an_entry_missing_a_file_is_no_memo(tmp_path):
    key = artifact_cache.input_key("a build")
    artifact_cache.store(tmp_path, key, memo(3))
    next(tmp_path.glob("artifact-*.counts")).unlink()
    assert artifact_cache.load(tmp_path, key) is None


@pytest.mark.parametrize(("edited", "changes"), [("compiler/chunking.py", True),
                                                  ("retrieval/lexical.py", True),
                                                  ("embedding.py", True),
                                                  ("gateway/app.py", False)])
def test_the_code_fingerprint_follows_the_compiler_and_retrieval_code(tmp_path, edited, changes):
    for name in ("compiler/chunking.py", "retrieval/lexical.py", "embedding.py", "gateway/app.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    before = artifact_cache.code_fingerprint(tmp_path)
    (tmp_path / edited).write_text("x = 2\n")
    assert (artifact_cache.code_fingerprint(tmp_path) != before) is changes
    assert (artifact_cache.PACKAGE / "compiler" / "chunking.py").is_file(), "the real layout"
