#!/usr/bin/env bash
# Sets up everything on a fresh Debian machine, idempotently: apt packages, the virtual
# environment at .venv, the Python package with its extras, the chat box's vendored runtime
# (npm + Debian's chromium) and the llama-server build with its model. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v python3 >/dev/null || missing+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++ make)
command -v git >/dev/null || missing+=(git)
# The deployment tests: nginx terminates TLS in front of the gateway (certificate made with
# openssl), and systemd-analyze verifies the unit that `site-knowledge service` writes. The
# tests run their own nginx on free ports; on a machine that runs systemd, Debian also starts
# its nginx service on port 80 (`systemctl disable --now nginx` if you do not want it).
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null || missing+=(nginx)
command -v openssl >/dev/null || missing+=(openssl)
command -v systemd-analyze >/dev/null || missing+=(systemd)
if [ ${#missing[@]} -gt 0 ]; then
  echo "==> apt-get install ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  python3 -m venv .venv
fi
echo "==> pip install -e .[gateway,dev]"
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q -e ".[gateway,dev]" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import site_knowledge.plugin.plugin, starlette, pytest, zensical" \
  || { echo "setup: the Python install failed" >&2; exit 1; }

echo "==> browser runtime (npm, chromium, vendored models)"
bash scripts/setup_browser.sh
if [ -f scripts/setup_llama.sh ]; then
  echo "==> llama-server and the GGUF model"
  bash scripts/setup_llama.sh
fi
echo "==> setup done"
