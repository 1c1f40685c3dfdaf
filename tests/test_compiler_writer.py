"""Writing the artifact: its bytes as the memo keeps them, and a memo hit's new build time."""

from __future__ import annotations

import json

from test_compiler_shards import FIXTURE

from site_knowledge.compiler.writer import Sidecars, serialized, sidecar_name, with_built_at


def test_only_the_documents_own_build_time_is_rewritten() -> None:
    on_disk = json.loads((FIXTURE / "site-knowledge.json").read_text(encoding="utf-8"))
    on_disk["sources"][0]["title"] = 'Notes "built_at":"1999-01-01T00:00:00Z"'
    rewritten = json.loads(with_built_at(serialized(on_disk), "2026-12-05T10:00:00Z"))
    assert rewritten["built_at"] == "2026-12-05T10:00:00Z"
    assert rewritten == {**on_disk, "built_at": "2026-12-05T10:00:00Z"}


def test_sidecars_are_named_by_their_content_as_the_fixture_names_them() -> None:
    on_disk = json.loads((FIXTURE / "site-knowledge.json").read_text(encoding="utf-8"))
    vectors = (FIXTURE / on_disk["vectors"]["file"]).read_bytes()
    elsewhere = (FIXTURE / on_disk["gate"]["elsewhere"]["file"]).read_bytes()
    sidecars = Sidecars(vectors, elsewhere)
    assert sidecars.digests["vectors"] == on_disk["vectors"]["sha256"]
    assert sidecar_name(sidecars.digests["vectors"], "vectors") == on_disk["vectors"]["file"]
    assert set(sidecars.named()) == {on_disk["vectors"]["file"],
                                     on_disk["gate"]["elsewhere"]["file"]}
