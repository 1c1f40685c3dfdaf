#!/usr/bin/env bash
# Sets everything up, builds the example site with the plugin, and serves the whole local
# stack: llama-server, the gateway and the built site. Ctrl-C stops all of it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "==> mkdocs build"
.venv/bin/mkdocs build --strict -d site
exec .venv/bin/site-knowledge serve site "$@"
