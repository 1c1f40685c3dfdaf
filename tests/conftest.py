"""Session-wide real builds shared by the test modules."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from gateway_fixtures import ScriptedUpstream, ThreadedServer
from sites import BuiltSite, build_site, copy_example, copy_netbox

from site_knowledge.retrieval import KnowledgeIndex, load_index

os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The repository's example site, built once with the plugin."""
    root = tmp_path_factory.mktemp("example")
    return build_site(copy_example(root / "src"), root / "site")


@pytest.fixture(scope="session")
def netbox_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """netbox-docs (260 pages) built once with the plugin, chat box off."""
    root = tmp_path_factory.mktemp("netbox")
    return build_site(copy_netbox(root / "src", chat=False), root / "site")


@pytest.fixture
def example_copy(tmp_path: Path) -> Path:
    """A writable copy of the example site's sources for tests that edit them."""
    return copy_example(tmp_path / "src")


@pytest.fixture(scope="session")
def example_index(example_site: BuiltSite) -> KnowledgeIndex:
    """The example site's artifact loaded for search, query encoder included."""
    loaded = load_index(example_site.site_dir)
    loaded.encoder  # noqa: B018 - load it once, before any timing
    return loaded


@pytest.fixture(scope="module")
def scripted() -> Iterator[tuple[ScriptedUpstream, str]]:
    """A scripted stand-in for llama-server (see ``ScriptedUpstream``) on a free port."""
    upstream = ScriptedUpstream()
    with ThreadedServer(upstream.app) as server:
        yield upstream, server.url
