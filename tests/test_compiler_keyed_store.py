"""The compiler caches' store: an empty value is a value, another code key reads nothing, and a
save keeps the entries the build used (read back or put)."""

from __future__ import annotations

from site_knowledge.compiler.keyed_store import KeyedStore


def test_empty_values_are_hits_and_a_save_keeps_what_the_build_used(tmp_path):
    path = tmp_path / "store.json"
    first: KeyedStore[str] = KeyedStore(path, "code")
    first.put("empty", "")
    first.put("gone", "x")
    first.save()
    later: KeyedStore[str] = KeyedStore(path, "code")
    assert later.get("empty") == "" and later.get("missing") is None
    later.put("new", "y")
    later.save()
    assert KeyedStore(path, "code").get("gone") is None
    again: KeyedStore[str] = KeyedStore(path, "code")
    assert (again.get("empty"), again.get("new")) == ("", "y")
    assert KeyedStore(path, "other code").get("new") is None
