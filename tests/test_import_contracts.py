"""The architecture holds: rooms import downwards only, no package has an import circle
(``.importlinter``, checked by import-linter's ``lint-imports``), and nothing edits
``sys.path`` to find code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODE_FOLDERS = ("site_knowledge", "tests", "evals", "benchmarks", "scripts")
PATH_EDIT = re.compile(r"\bsys\.path\.(?:insert|append|extend)\(|\bsys\.path\s*(?:\+=|=[^=])")


def test_the_import_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--config", str(REPO / ".importlinter"), "--no-cache"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_a_broken_contract_is_reported(tmp_path: Path) -> None:
    """The check can fail: a contract that forbids an import the code makes is broken."""
    config = tmp_path / "contracts.ini"
    config.write_text("[importlinter]\nroot_package = site_knowledge\n\n"
                      "[importlinter:contract:upside-down]\nname = upside down\ntype = layers\n"
                      "layers =\n    site_knowledge.retrieval\n    site_knowledge.gateway\n",
                      encoding="utf-8")
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--config", str(config), "--no-cache"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "site_knowledge.gateway is not allowed to import site_knowledge.retrieval" in done.stdout


def test_no_code_edits_sys_path() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for folder in CODE_FOLDERS
        for path in sorted((REPO / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PATH_EDIT.search(line) and path != Path(__file__).resolve()
    ]
    assert not offenders, f"sys.path edited at {offenders}"
