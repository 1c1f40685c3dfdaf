"""``site-knowledge eval`` from the built wheel, installed into a fresh virtual environment and
run outside the checkout: what the command needs ships in the package.

The wheel is built offline from a copy of the sources (the project's own build backend, no
build isolation) and installed without its dependencies; those come from this environment's
site-packages, named in a ``.pth`` file. Python reads ``.pth`` files only in a site folder, so
the checkout's editable finder (a ``.pth`` file there) is never loaded by the fresh one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from browser_sites import build_plain_theme_site

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = [
    {"id": "automated", "question": "When was the Brisk Point lighthouse automated?",
     "expected": ["index.md"], "kind": "lookup"},
    {"id": "keeper", "question": "Who was the last keeper before automation?",
     "expected": ["history.md"], "kind": "lookup"},
    {"id": "tickets", "question": "How much does a ticket to the tower cost?",
     "expected": ["visiting.md"], "kind": "lookup"},
    {"id": "gibberish", "question": "qzx vrrbl plonk fnarg", "expected": [], "kind": "gibberish"},
]


def _run(args: list[str | Path], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _wheel(work: Path) -> Path:
    """The wheel, built offline from a copy of the package's sources."""
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "site_knowledge", source / "site_knowledge",
                    ignore=shutil.ignore_patterns("vendor", "__pycache__"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "-q", "-w", work / "dist", source], cwd=work)
    (wheel,) = (work / "dist").glob("mkdocs_site_knowledge-*.whl")
    return wheel


def _install(wheel: Path, venv: Path) -> Path:
    """A fresh venv with the wheel installed and this environment's packages beside it; its python."""
    _run([sys.executable, "-m", "venv", venv], cwd=venv.parent)
    python = venv / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                     cwd=venv.parent).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=venv.parent)
    return python


@pytest.mark.slow
def test_eval_retrieval_runs_from_the_installed_wheel(tmp_path: Path) -> None:
    site = build_plain_theme_site(tmp_path)
    python = _install(_wheel(tmp_path), tmp_path / "venv")
    outside = tmp_path / "elsewhere"
    outside.mkdir()

    where = _run([python, "-c", "import site_knowledge; print(site_knowledge.__file__)"], cwd=outside)
    installed = Path(where.stdout.strip()).resolve()
    assert installed.is_relative_to((tmp_path / "venv").resolve()), installed
    assert not installed.is_relative_to(REPO)

    questions = outside / "lighthouse.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    command = tmp_path / "venv" / "bin" / "site-knowledge"
    done = _run([command, "eval", "--retrieval", site, "--questions", questions.name], cwd=outside)
    lines = done.stdout.splitlines()
    assert any(line.startswith("hybrid  recall@1 1.000") for line in lines), done.stdout
    assert any(line.startswith("gate ") for line in lines), done.stdout
    report = json.loads((outside / "retrieval-lighthouse.json").read_text(encoding="utf-8"))
    assert report["dataset"]["questions"] == len(QUESTIONS)
    assert report["summary"]["gate"]["refused_gated"] == 1.0

    battery = _run([command, "eval", "--engine", "constant-refusal", "--battery", "v1", "--only",
                    "gibberish", "--no-write"], cwd=outside)
    assert "score 12/12" in battery.stdout
