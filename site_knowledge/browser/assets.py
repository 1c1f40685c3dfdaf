"""The chat box's files for a built site, and the tags that load it on every page.

The MkDocs plugin and ``site-knowledge compile`` call :func:`install_browser_assets` once per
build (after the site is written) and :func:`inject_launcher` for every page that keeps the box.
Third-party runtime and model files are vendored into ``vendor/`` beside this module by
``scripts/setup_browser.sh``; nothing is fetched from a CDN unless ``BrowserOptions.cdn`` says so.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

log = logging.getLogger("mkdocs.plugins.site_knowledge.browser")

HERE = Path(__file__).parent
VENDOR = HERE / "vendor"
DEFAULT_DEST = "assets/site-knowledge"
ENGINES = ("gateway", "webllm", "wllama", "search")
FIRST_PARTY = ("*.js", "*.css", "engines/*.js", "grounding_rules.json")
# Vendored files each engine needs; the rest are always shipped (query encoder, tokenizer).
# Of models/, only the wllama model's files are shipped.
ENGINE_FILES = {"webllm": ("web-llm/",), "wllama": ("wllama/", "models/")}
# A part of a split GGUF, as llama.cpp's gguf-split names it (and wllama finds the others).
GGUF_PART = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")
# What launcher_tags writes (the config's JSON never contains "<"), so a second run finds it.
LAUNCHER_BLOCK = re.compile(
    r'<script type="application/json" id="site-knowledge-config">[^<]*</script>\n'
    r'<script type="module" src="[^"<]*/launcher\.js"></script>\n'
)


@dataclass
class BrowserOptions:
    """What the plugin exposes as configuration for the chat box.

    Attributes:
        gateways: base URLs of gateways, tried in order (``POST {url}/api/ask``).
        engines: engine order; any of ``gateway``, ``webllm``, ``wllama``, ``search``.
        webllm_model: MLC model id used when the WebGPU adapter has ``shader-f16``.
        webllm_model_f32: MLC model id used otherwise.
        webllm_url: base URL (absolute, or relative to the site root) where the MLC weights
            (``{url}/{model_id}/resolve/main/...``, the Hugging Face repository's layout) and
            model library (``{url}/{model_id}-webgpu.wasm``) are self-hosted; None means not
            hosted, so WebLLM is skipped unless ``cdn`` is true.
        wllama_model: the CPU model under ``vendor/models/`` (see :func:`wllama_parts`; default:
            the vendored SmolLM2-135M Q8_0, in parts named with their content hash).
        wllama_n_ctx: context size for the CPU model.
        wllama_n_threads: most threads for the CPU model (1 unless the site is cross-origin
            isolated).
        cdn: allow WebLLM to fetch its prebuilt model and library from their public hosts.
        top_k: passages retrieved per question.
        shortcut: the letter that opens the box with Ctrl or ⌘.
        artifact: the file the box loads: the single artifact or the sharded one's manifest.
    """

    gateways: list[str] = field(default_factory=list)
    engines: list[str] = field(default_factory=lambda: list(ENGINES))
    webllm_model: str = "SmolLM2-360M-Instruct-q4f16_1-MLC"
    webllm_model_f32: str = "SmolLM2-360M-Instruct-q4f32_1-MLC"
    webllm_url: str | None = None
    wllama_model: str | None = None
    wllama_n_ctx: int = 2048
    wllama_n_threads: int = 4
    cdn: bool = False
    top_k: int = 4
    artifact: str = "site-knowledge.json"

    def __post_init__(self) -> None:
        unknown = [name for name in self.engines if name not in ENGINES]
        if unknown:
            raise ValueError(f"unknown chat engine(s) {unknown}; known: {list(ENGINES)}")


@cache
def vendor_manifest() -> dict[str, object]:
    """``vendor/manifest.json`` written by ``scripts/setup_browser.sh`` (empty when absent)."""
    path = VENDOR / "manifest.json"
    if not path.is_file():
        return {}
    manifest: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return manifest


def _vendored_models() -> dict[str, list[str]]:
    """Each GGUF model under ``vendor/models/`` (a split model by its stem) -> its files."""
    files = vendor_manifest().get("files", {})
    assert isinstance(files, dict)
    models: dict[str, list[str]] = {}
    for name in sorted(files):
        if name.startswith("models/") and name.endswith(".gguf"):
            part = GGUF_PART.match(name)
            models.setdefault(part["stem"] if part else name.removesuffix(".gguf"), []).append(name)
    return models


def wllama_parts(name: str | None = None) -> list[str]:
    """The files of the CPU model under ``vendor/``, in the order wllama loads them.

    Args:
        name: None for the vendored default (the manifest's ``wllama_model``); else a GGUF under
            ``vendor/models/`` (the ``models/`` and ``.gguf`` may be left out): a whole file,
            any part of a split model (``NAME-00001-of-00004.gguf``), the split model's
            ``NAME``, or the start of the name of exactly one vendored model (such as
            ``smollm2-135m-instruct-q8_0``, whose full name carries its content hash).

    Returns:
        One file, or a split model's parts in order; empty when nothing is vendored.

    Raises:
        ValueError: the name matches no vendored model, or several, or a model with parts
            missing.
    """
    if name is None:
        default = vendor_manifest().get("wllama_model")  # its parts (one file, before)
        if isinstance(default, list) and default:
            name = str(default[0])
        elif isinstance(default, str):
            name = default
        else:
            return []
    models = _vendored_models()
    key = name.strip("/").removeprefix("models/")
    part = GGUF_PART.match(key)
    key = "models/" + (part["stem"] if part else key.removesuffix(".gguf"))
    found = [key] if key in models else [k for k in models if k.startswith(key + "-")]
    if len(found) != 1:
        what = "no vendored model" if not found else f"{len(found)} vendored models"
        raise ValueError(f"wllama_model {name!r}: {what} match; vendored: {sorted(models) or 'none'}")
    files = models[found[0]]
    counts = {m["count"] for m in map(GGUF_PART.match, files) if m}
    if counts and (len(counts) > 1 or int(counts.pop()) != len(files)):
        raise ValueError(f"wllama_model {name!r}: parts missing or mixed under vendor/: {files}")
    return files


def _wllama_model(options: BrowserOptions) -> list[str]:
    return wllama_parts(options.wllama_model) if "wllama" in options.engines else []


def _webllm_shipped(options: BrowserOptions) -> bool:
    """WebLLM's runtime is needed only where it can get a model: self-hosted, or by ``cdn``."""
    return "webllm" in options.engines and bool(options.webllm_url or options.cdn)


def _wanted_vendor_files(options: BrowserOptions) -> list[str]:
    files = vendor_manifest().get("files", {})
    assert isinstance(files, dict)
    skipped = [
        prefix
        for engine, prefixes in ENGINE_FILES.items()
        if engine not in options.engines or (engine == "webllm" and not _webllm_shipped(options))
        for prefix in prefixes
    ]
    model = set(_wllama_model(options))
    return [name for name in files
            if not any(name.startswith(prefix) for prefix in skipped)
            and (not name.startswith("models/") or name in model)]


def _place(src: Path, dst: Path) -> None:
    """Hard-link when possible (vendored models are large), else copy."""
    if dst.exists():
        if dst.stat().st_size == src.stat().st_size and dst.stat().st_mtime >= src.stat().st_mtime:
            return
        dst.unlink()
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def install_browser_assets(site_dir: Path, dest: str, options: BrowserOptions) -> int:
    """Copy the chat box's first-party and vendored files into ``site_dir/dest``.

    Args:
        site_dir: the built site's folder.
        dest: folder under the site root, e.g. ``assets/site-knowledge`` (the artifact goes there
            too).
        options: the chat box's configuration.

    Returns:
        The number of bytes placed.

    Vendored files a previous run placed that these options leave out (an engine dropped, an
    earlier model) are removed, so a site built in place (``--dirty``, ``compile`` again) weighs
    no more than a clean build.
    """
    target = site_dir / dest.strip("/")
    total = 0
    for pattern in FIRST_PARTY:
        for src in sorted(HERE.glob(pattern)):
            dst = target / src.relative_to(HERE)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            total += src.stat().st_size
    if not vendor_manifest():
        log.warning(
            "site-knowledge: the chat box's runtime is not vendored; run scripts/setup_browser.sh"
        )
        return total
    wanted = _wanted_vendor_files(options)
    for name in wanted:
        src = VENDOR / name
        _place(src, target / "vendor" / name)
        total += src.stat().st_size
    _prune(target / "vendor", set(wanted))
    return total


def _prune(vendor: Path, wanted: set[str]) -> None:
    for path in sorted(vendor.rglob("*"), reverse=True):  # files before their folders
        if path.is_dir():
            if not any(path.iterdir()):
                path.rmdir()
        elif path.relative_to(vendor).as_posix() not in wanted:
            path.unlink()


def browser_config(root_prefix: str, options: BrowserOptions) -> dict[str, object]:
    """The JSON the launcher reads from ``#site-knowledge-config``."""
    return {
        "version": 1,
        "root": root_prefix or "./",
        "artifact": options.artifact,
        "gateways": list(options.gateways),
        "engines": list(options.engines),
        "top_k": options.top_k,
        "cdn": options.cdn,
        "webllm": {
            "model": options.webllm_model,
            "model_f32": options.webllm_model_f32,
            "url": options.webllm_url,
            "n_ctx": options.wllama_n_ctx,
        },
        "wllama": {
            "model": _wllama_model(options) or None,
            "n_ctx": options.wllama_n_ctx,
            "n_threads": options.wllama_n_threads,
        },
    }


def launcher_tags(root_prefix: str, dest: str, options: BrowserOptions) -> str:
    """The HTML the plugin injects before ``</body>`` of every page that keeps the box.

    Args:
        root_prefix: relative path from the page to the site root, e.g. ``"../../"`` or ``""``.
        dest: the assets folder under the site root.
        options: the chat box's configuration.

    Returns:
        A config ``<script type="application/json">`` and the launcher's module script.
    """
    prefix = root_prefix if not root_prefix or root_prefix.endswith("/") else root_prefix + "/"
    payload = json.dumps(browser_config(prefix, options), separators=(",", ":"))
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    src = f"{prefix}{dest.strip('/')}/launcher.js"
    return (
        f'<script type="application/json" id="site-knowledge-config">{payload}</script>\n'
        f'<script type="module" src="{src}"></script>\n'
    )


def root_prefix(page_path: str) -> str:
    """The relative path from a page to the site root, from its URL or built file path.

    ``""`` and ``index.html`` give ``./``; ``cv/`` and ``cv/index.html`` give ``../``.
    """
    depth = page_path.count("/")
    return "../" * depth if depth else "./"


def strip_launcher(page_html: str) -> str:
    """The page without the tags :func:`launcher_tags` put there (any number of times)."""
    return LAUNCHER_BLOCK.sub("", page_html)


def inject_launcher(page_html: str, page_path: str, dest: str, options: BrowserOptions) -> str:
    """The page with the chat box's tags before ``</body>``, exactly once.

    Idempotent: tags a previous build or run injected are replaced, never doubled.

    Args:
        page_html: the page's full HTML.
        page_path: the page's URL or built file path, relative to the site root.
        dest: the assets folder under the site root.
        options: the chat box's configuration.
    """
    tags = launcher_tags(root_prefix(page_path), dest, options)
    head, marker, tail = strip_launcher(page_html).rpartition("</body>")
    return f"{head}{tags}{marker}{tail}" if marker else f"{tail}{tags}"
