"""Real built sites and a node runner for the browser tests (tests/test_browser_*.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sites import NETBOX

from evals.sites import dump_config, read_config

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "homepage"
BROWSER_TESTS = REPO / "tests" / "browser"
CHROMIUM = Path(os.environ.get("SK_CHROMIUM", "/usr/bin/chromium"))
VENDOR = REPO / "site_knowledge" / "browser" / "vendor" / "manifest.json"


def browser_ready() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} missing (scripts/setup_browser.sh installs it)"
    if not (REPO / "node_modules" / "playwright-core").is_dir():
        return "node_modules missing (scripts/setup_browser.sh runs npm ci)"
    if not VENDOR.is_file():
        return "site_knowledge/browser/vendor missing (run scripts/setup_browser.sh)"
    if shutil.which("node") is None:
        return "node missing"
    return None


def require_browser() -> None:
    """Fail (on CI) or skip (elsewhere) when chromium, node or the vendored files are absent."""
    reason = browser_ready()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def build(config: dict[str, Any], workdir: Path) -> Path:
    """Write ``mkdocs.yml`` into workdir, build it into ``workdir/site`` and return that."""
    (workdir / "mkdocs.yml").write_text(dump_config(config), encoding="utf-8")
    site = workdir / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", "mkdocs.yml", "-d", str(site)],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"mkdocs build failed in {workdir}:\n{done.stderr[-3000:]}")
    return site


def _no_remote_fonts(config: dict[str, Any]) -> None:
    theme = config.setdefault("theme", {})
    if isinstance(theme, str):
        config["theme"] = theme = {"name": theme}
    if theme.get("name") == "material":
        theme["font"] = False


def build_example_site(workdir: Path) -> Path:
    """The repository's example site (Material, instant navigation), without Google Fonts."""
    for name in ("docs", "ontology.py"):
        src = EXAMPLE / name
        if src.is_dir():
            shutil.copytree(src, workdir / name)
        else:
            shutil.copy2(src, workdir / name)
    config = read_config(EXAMPLE / "mkdocs.yml")
    _no_remote_fonts(config)
    return build(config, workdir)


def build_netbox_site(workdir: Path) -> Path:
    """The 260-page netbox-docs corpus with the plugin added."""
    config = read_config(NETBOX / "mkdocs.yml")
    config["docs_dir"] = str(NETBOX / "docs")
    plugins = [p for p in config.get("plugins", []) if p != "site-knowledge"]
    config["plugins"] = [*plugins, "site-knowledge"]
    _no_remote_fonts(config)
    return build(config, workdir)


def build_plain_theme_site(workdir: Path) -> Path:
    """A small site on MkDocs' default theme."""
    docs = workdir / "docs"
    docs.mkdir()
    pages = {
        "index.md": "# Lighthouse keeping\n\nThe Brisk Point lighthouse was automated in 1987. "
        "Its lamp is a third-order Fresnel lens that flashes white every ten seconds.\n",
        "history.md": "# History\n\n## Keepers\n\nMarta Ilves kept the Brisk Point light from "
        "1961 to 1987, the last keeper before automation.\n\n## Storms\n\nThe 1974 storm broke "
        "the lantern glass; it was replaced within a week.\n",
        "visiting.md": "# Visiting\n\nThe tower is open to visitors on Saturdays from May to "
        "September. Tickets cost four euros and there are 112 steps to the gallery.\n",
    }
    for name, text in pages.items():
        (docs / name).write_text(text, encoding="utf-8")
    config = {
        "site_name": "Brisk Point Light",
        "theme": {"name": "mkdocs", "highlightjs": False},
        "plugins": ["site-knowledge"],
    }
    return build(config, workdir)


def run_node_tests(suite: str) -> None:
    """Run ``node --test`` on a suite in tests/browser and fail with its output on any failure."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node missing (scripts/setup_browser.sh)")
    done = subprocess.run([node, "--test", str(BROWSER_TESTS / suite)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout


def run_node(script: str, *args: str, env: dict[str, str] | None = None,
             timeout: float = 900) -> dict[str, Any]:
    """Run a node script from tests/browser; it prints one JSON object on its last line."""
    done = subprocess.run(
        ["node", str(BROWSER_TESTS / script), *args],
        cwd=REPO, env={**os.environ, **(env or {})}, capture_output=True, text=True,
        timeout=timeout, check=False,
    )
    if done.returncode != 0:
        raise AssertionError(
            f"node {script} exited {done.returncode}\nstdout:\n{done.stdout[-4000:]}\n"
            f"stderr:\n{done.stderr[-4000:]}"
        )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    result: dict[str, Any] = json.loads(lines[-1])
    return result
