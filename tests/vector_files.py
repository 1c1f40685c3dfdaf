"""Shared test-vector files: each is written by a generator script from the Python reference
and read by the JavaScript twin's node test; the Python test recomputes it with today's code."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def stored(name: str) -> dict[str, Any]:
    """``tests/data/NAME`` as parsed JSON."""
    data: dict[str, Any] = json.loads((REPO / "tests" / "data" / name).read_text(encoding="utf-8"))
    return data


def generated(script: str, **options: Any) -> dict[str, Any]:
    """What ``scripts/SCRIPT``'s ``build(**options)`` returns today, as it would be stored."""
    spec = importlib.util.spec_from_file_location(Path(script).stem, REPO / "scripts" / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fresh: dict[str, Any] = json.loads(json.dumps(module.build(**options), ensure_ascii=False))
    return fresh


def assert_current(name: str, script: str, file: dict[str, Any], fresh: dict[str, Any]) -> None:
    """Every section of the stored file equals what the script computes today."""
    for section, value in fresh.items():
        assert file.get(section) == value, (
            f"{section}: tests/data/{name} differs from the Python reference; run "
            f"scripts/{script} after a deliberate change")
    assert set(file) == set(fresh)
