#!/usr/bin/env bash
# Sets everything up, then runs the linters and the whole test suite (real builds, a real
# llama-server, a real headless Chromium). `.ci/run` calls this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "==> ruff"
.venv/bin/ruff check site_knowledge tests evals benchmarks
echo "==> mypy"
.venv/bin/mypy
echo "==> pytest"
set +e
.venv/bin/pytest -p no:cacheprovider "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
exit "$code"
