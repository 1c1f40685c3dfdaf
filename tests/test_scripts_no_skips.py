"""scripts/no_skips.py: a real pytest run's JUnit report, with a skip, an xfail and a pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scripts.no_skips import skipped_tests

SAMPLE = '''
import pytest

def test_passes():
    pass

def test_missing_fixture():
    pytest.skip("corpus folder missing")

@pytest.mark.xfail(strict=True)
def test_known_bug():
    assert False
'''


def _junit_report(tmp_path: Path, source: str) -> str:
    (tmp_path / "test_sample.py").write_text(source, encoding="utf-8")
    report = tmp_path / "report.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-o", "addopts=", "-o", "filterwarnings=", f"--junitxml={report}",
                    str(tmp_path / "test_sample.py")], cwd=tmp_path, capture_output=True, check=False)
    return str(report)


def test_a_skip_is_reported_and_an_xfail_is_not(tmp_path: Path) -> None:
    skipped = skipped_tests(_junit_report(tmp_path, SAMPLE))
    assert len(skipped) == 1
    assert "test_missing_fixture" in skipped[0] and "corpus folder missing" in skipped[0]


def test_the_script_exits_nonzero_on_a_skip_and_zero_without(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[1] / "scripts" / "no_skips.py"
    with_skip = subprocess.run([sys.executable, str(script), _junit_report(tmp_path, SAMPLE)],
                               capture_output=True, text=True, check=False)
    assert with_skip.returncode == 1 and "corpus folder missing" in with_skip.stderr
    clean = tmp_path / "clean"
    clean.mkdir()
    without = subprocess.run([sys.executable, str(script),
                              _junit_report(clean, "def test_passes():\n    pass\n")],
                             capture_output=True, text=True, check=False)
    assert without.returncode == 0, without.stderr
