#!/usr/bin/env bash
# Sets everything up, then runs the linters and the whole test suite (real builds, a real
# llama-server, a real headless Chromium). `.ci/run` calls this. A skipped test fails the run:
# everything a test needs is in the repository or installed by scripts/setup.sh, so a skip
# means a missing fixture.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "==> ruff"
.venv/bin/ruff check site_knowledge tests evals benchmarks
echo "==> mypy"
.venv/bin/mypy
echo "==> pytest"
report=$(mktemp --suffix=.xml)
trap 'rm -f "$report"' EXIT
set +e
.venv/bin/pytest -p no:cacheprovider --junitxml="$report" "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
if [ "$code" -eq 0 ] || [ "$code" -eq 1 ]; then
  .venv/bin/python scripts/no_skips.py "$report" || exit 1
fi
exit "$code"
