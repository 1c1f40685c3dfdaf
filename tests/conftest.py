"""Session-wide real builds shared by the test modules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sites import BuiltSite, build_site, copy_example, copy_netbox

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
