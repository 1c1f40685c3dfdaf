#!/usr/bin/env bash
# Sets everything up, builds the example site with the plugin, and serves the whole local
# stack: llama-server, the gateway and the built site. Ctrl-C stops all of it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The demo's site asks the local gateway; a deployed build names its public one (README, Deploy).
export SITE_KNOWLEDGE_GATEWAY="${SITE_KNOWLEDGE_GATEWAY:-http://127.0.0.1:8787}"
export SITE_KNOWLEDGE_SITE_URL="${SITE_KNOWLEDGE_SITE_URL:-http://127.0.0.1:8000/}"
echo "==> mkdocs build (gateway $SITE_KNOWLEDGE_GATEWAY)"
.venv/bin/mkdocs build --strict -f examples/homepage/mkdocs.yml -d "$PWD/site"
exec .venv/bin/site-knowledge serve site --mode public "$@"
