"""The chat box's assets and launcher tags, as the plugin uses them (no browser needed)."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from gateway_fixtures import LLAMA_BINARY, free_port, needs_llama

from site_knowledge.browser import assets
from site_knowledge.browser.assets import (
    BrowserOptions,
    browser_config,
    inject_launcher,
    install_browser_assets,
    launcher_tags,
    strip_launcher,
    wllama_parts,
)
from site_knowledge.compiler.model import BuildError
from site_knowledge.plugin.options import load_options

BROWSER = Path(assets.__file__).parent
LAUNCHER_BUDGET = 8 * 1024


def config_of(tags: str) -> dict[str, object]:
    match = re.search(r'id="site-knowledge-config">(.*?)</script>', tags, re.S)
    assert match, tags
    parsed: dict[str, object] = json.loads(match.group(1))
    return parsed


def test_launcher_is_small() -> None:
    assert (BROWSER / "launcher.js").stat().st_size <= LAUNCHER_BUDGET


def test_launcher_imports_nothing_eagerly() -> None:
    source = (BROWSER / "launcher.js").read_text(encoding="utf-8")
    assert not re.search(r"^\s*import\s", source, re.M), "the launcher must lazy-import the box"
    assert 'import("./chat.js")' in source


def test_tags_carry_config_and_module_script() -> None:
    options = BrowserOptions(gateways=["https://ask.example.org/"], engines=["gateway", "search"])
    tags = launcher_tags("../../", "assets/site-knowledge", options)
    assert '<script type="module" src="../../assets/site-knowledge/launcher.js"></script>' in tags
    config = config_of(tags)
    assert config["root"] == "../../"
    assert config["gateways"] == ["https://ask.example.org/"]
    assert config["engines"] == ["gateway", "search"]
    assert config["artifact"] == "site-knowledge.json"


def test_tags_at_site_root() -> None:
    tags = launcher_tags("", "/assets/sk/", BrowserOptions())
    assert 'src="assets/sk/launcher.js"' in tags
    assert config_of(tags)["root"] == "./"


def test_tags_cannot_be_broken_out_of() -> None:
    options = BrowserOptions(gateways=["https://x.example/</script><script>alert(1)</script>"])
    tags = launcher_tags("./", "assets/site-knowledge", options)
    assert tags.count("</script>") == 2
    assert config_of(tags)["gateways"] == list(options.gateways)


PAGE = "<html><head></head><body><p>Body text</p></body></html>"


@pytest.mark.parametrize(("page_path", "root"), [
    ("", "./"), ("index.html", "./"), ("cv/", "../"), ("cv/index.html", "../"),
    ("blog/2024/03/09/on-call/index.html", "../../../../../"), ("guide.html", "./"),
])
def test_injection_finds_the_site_root_from_url_or_file(page_path: str, root: str) -> None:
    page = inject_launcher(PAGE, page_path, "assets/site-knowledge", BrowserOptions())
    assert f'<script type="module" src="{root}assets/site-knowledge/launcher.js">' in page
    assert config_of(page)["root"] == root
    assert page.endswith("</script>\n</body></html>")


def test_injection_is_idempotent_and_takes_the_newest_options() -> None:
    once = inject_launcher(PAGE, "cv/", "assets/site-knowledge", BrowserOptions())
    twice = inject_launcher(once, "cv/", "assets/site-knowledge", BrowserOptions())
    assert twice == once
    changed = inject_launcher(once, "cv/", "assets/site-knowledge",
                              BrowserOptions(gateways=["https://ask.example.org"]))
    assert changed.count('id="site-knowledge-config"') == 1
    assert changed.count("launcher.js") == 1
    assert config_of(changed)["gateways"] == ["https://ask.example.org"]
    assert strip_launcher(changed) == PAGE


def test_injection_without_body_tag_appends() -> None:
    page = inject_launcher("<p>fragment</p>", "", "assets/site-knowledge", BrowserOptions())
    assert page.startswith("<p>fragment</p><script")
    assert inject_launcher(page, "", "assets/site-knowledge", BrowserOptions()) == page


def test_unknown_engine_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown chat engine"):
        BrowserOptions(engines=["gateway", "openai"])


def test_wllama_model_is_vendored_in_versioned_parts_under_50_mb() -> None:
    model = browser_config("./", BrowserOptions())["wllama"]
    assert isinstance(model, dict)
    if model["model"] is None:
        pytest.skip("vendor/ not populated (scripts/setup_browser.sh)")
    parts = model["model"]
    assert len(parts) > 1
    for n, part in enumerate(parts, 1):
        assert re.fullmatch(rf"models/smollm2-135m-instruct-q8_0-[0-9a-f]{{12}}-{n:05d}-of-"
                            rf"{len(parts):05d}\.gguf", part), part
        assert (BROWSER / "vendor" / part).stat().st_size <= 50 * 1024 * 1024, part


SPLIT = [f"models/tiny-0123456789ab-0000{n}-of-00003.gguf" for n in (1, 2, 3)]


@pytest.fixture
def fake_vendor(monkeypatch: pytest.MonkeyPatch) -> None:
    files = {name: 10 for name in [*SPLIT, "models/own.gguf", "models/other-aaa.gguf",
                                   "models/other-bbb.gguf", "models/gap-00001-of-00002.gguf",
                                   "wllama/wllama.wasm", "web-llm/index.js", "ort/ort.mjs"]}
    manifest = {"files": files, "wllama_model": SPLIT}
    monkeypatch.setattr(assets, "vendor_manifest", lambda: manifest)


@pytest.mark.parametrize("name", [None, SPLIT[0], SPLIT[2], "models/tiny-0123456789ab",
                                  "tiny-0123456789ab.gguf", "tiny", "/models/tiny"])
def test_a_wllama_model_name_resolves_to_its_parts(fake_vendor: None, name: str | None) -> None:
    assert wllama_parts(name) == SPLIT


def test_a_whole_gguf_resolves_to_itself(fake_vendor: None) -> None:
    assert wllama_parts("own.gguf") == wllama_parts("models/own") == ["models/own.gguf"]


@pytest.mark.parametrize(("name", "reason"), [
    ("absent", "no vendored model match"), ("other", "2 vendored models match"),
    ("gap", "parts missing"),
])
def test_an_unresolvable_wllama_model_is_refused(fake_vendor: None, name: str,
                                                 reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        wllama_parts(name)


def test_the_plugin_option_names_the_vendored_models_when_it_matches_none(
        fake_vendor: None, tmp_path: Path) -> None:
    with pytest.raises(BuildError, match=r"wllama_model: wllama_model 'absent': no vendored "
                                         r"model match; vendored: \['models/gap'"):
        load_options({"wllama_model": "absent"}, tmp_path / "mkdocs.yml")
    assert load_options({"wllama_model": "tiny"}, tmp_path / "mkdocs.yml").wllama_model == "tiny"


@pytest.mark.parametrize(("options", "shipped"), [
    (BrowserOptions(), ["ort/ort.mjs", *SPLIT, "wllama/wllama.wasm"]),
    (BrowserOptions(webllm_url="mlc/"), ["ort/ort.mjs", *SPLIT, "web-llm/index.js",
                                         "wllama/wllama.wasm"]),
    (BrowserOptions(cdn=True, engines=["webllm", "search"]), ["ort/ort.mjs", "web-llm/index.js"]),
    (BrowserOptions(cdn=True, engines=["gateway", "wllama", "search"]),
     ["ort/ort.mjs", *SPLIT, "wllama/wllama.wasm"]),
    (BrowserOptions(engines=["gateway", "search"]), ["ort/ort.mjs"]),
    (BrowserOptions(wllama_model="own"), ["models/own.gguf", "ort/ort.mjs", "wllama/wllama.wasm"]),
])
def test_an_engine_left_out_leaves_its_files_out(fake_vendor: None, options: BrowserOptions,
                                                 shipped: list[str]) -> None:
    """WebLLM's runtime ships only where it can get a model (``webllm_url`` or ``cdn``)."""
    assert sorted(assets._wanted_vendor_files(options)) == sorted(shipped)
    wllama = browser_config("./", options)["wllama"]
    assert isinstance(wllama, dict)
    assert wllama["model"] == ([n for n in shipped if n.startswith("models/")] or None)


def test_install_copies_first_party_and_vendored(tmp_path: Path) -> None:
    options = BrowserOptions(engines=["gateway", "wllama", "search"])
    placed = install_browser_assets(tmp_path, "assets/site-knowledge", options)
    target = tmp_path / "assets" / "site-knowledge"
    for name in ("launcher.js", "chat.js", "chat.css", "search-worker.js", "retrieval.js",
                 "engines/gateway.js", "engines/local.js", "engines/search.js"):
        assert (target / name).is_file(), name
    assert not list(target.rglob("*.py"))
    if not assets.vendor_manifest():
        pytest.skip("vendor/ not populated (scripts/setup_browser.sh)")
    vendor = target / "vendor"
    assert (vendor / "encoder" / "model.onnx").is_file()
    assert (vendor / "ort" / "ort-wasm-simd-threaded.wasm").is_file()
    assert (vendor / "wllama" / "wllama.wasm").is_file()
    assert not (vendor / "web-llm").exists(), "WebLLM is not among the engines"
    on_disk = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    assert placed == on_disk
    assert install_browser_assets(tmp_path, "assets/site-knowledge", options) == placed


def test_a_second_install_removes_vendored_files_left_out(tmp_path: Path) -> None:
    if not assets.vendor_manifest():
        pytest.skip("vendor/ not populated (scripts/setup_browser.sh)")
    vendor = tmp_path / "assets" / "site-knowledge" / "vendor"
    stale = vendor / "models" / "smollm2-135m-instruct-q8_0-0c1d3326cd97.gguf"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"GGUF")  # an earlier build's unsplit model
    install_browser_assets(tmp_path, "assets/site-knowledge", BrowserOptions())
    assert not stale.exists()
    assert (vendor / wllama_parts()[0]).is_file()
    placed = install_browser_assets(tmp_path, "assets/site-knowledge",
                                    BrowserOptions(engines=["gateway", "search"]))
    assert not (vendor / "models").exists() and not (vendor / "wllama").exists()
    on_disk = sum(p.stat().st_size for p in (tmp_path / "assets").rglob("*") if p.is_file())
    assert placed == on_disk


def test_first_party_code_names_no_remote_host() -> None:
    for path in [*BROWSER.glob("*.js"), *BROWSER.glob("engines/*.js"), BROWSER / "chat.css"]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"https?://(?!127\.0\.0\.1|localhost)", text), path.name


@pytest.mark.llama
@needs_llama
def test_llama_cpp_loads_the_vendored_parts_as_one_model(tmp_path: Path) -> None:
    """llama.cpp itself (llama-server, given the first part) finds the other parts by name and
    checks ``split.count`` and ``split.tensors.count``; the model then answers."""
    parts = wllama_parts()
    if not parts:
        pytest.skip("vendor/ not populated (scripts/setup_browser.sh)")
    assert LLAMA_BINARY is not None
    port = free_port()
    log = (tmp_path / "llama.log").open("wb")
    server = subprocess.Popen([str(LLAMA_BINARY), "-m", str(BROWSER / "vendor" / parts[0]),
                               "--host", "127.0.0.1", "--port", str(port), "-t", "1", "-c", "512",
                               "-v"],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and server.poll() is None:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            time.sleep(0.5)
        assert server.poll() is None, (tmp_path / "llama.log").read_text()[-2000:]
        reply = httpx.post(f"{base}/completion", timeout=60, json={
            "prompt": "The capital of France is", "n_predict": 4, "temperature": 0}).json()
        assert "Paris" in reply["content"]
    finally:
        server.kill()
        server.wait()
        log.close()
    loaded = (tmp_path / "llama.log").read_text()
    assert f"additional {len(parts) - 1} GGUFs metadata loaded" in loaded, loaded[-3000:]
