"""Fail when a pytest JUnit report holds a skipped test: a skip here means a missing fixture.

    .venv/bin/python scripts/no_skips.py report.xml
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree


def skipped_tests(report_path: str) -> list[str]:
    """``module::test: reason`` for every skipped (not xfailed) test case in a JUnit report."""
    found = []
    for case in ElementTree.parse(report_path).getroot().iter("testcase"):
        for skipped in case.findall("skipped"):
            if skipped.get("type") == "pytest.xfail":
                continue
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            found.append(f"{name}: {skipped.get('message', '')}")
    return found


def main() -> int:
    """Print the skipped tests and return 1 if there are any."""
    skipped = skipped_tests(sys.argv[1])
    for line in skipped:
        print(f"skipped: {line}", file=sys.stderr)
    if skipped:
        print(f"{len(skipped)} test(s) skipped: every fixture must be present (scripts/setup.sh)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
