"""The chat box's assets and launcher tags, as the plugin uses them (no browser needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from site_knowledge.browser import assets
from site_knowledge.browser.assets import (
    BrowserOptions,
    browser_config,
    inject_launcher,
    install_browser_assets,
    launcher_tags,
    strip_launcher,
)

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


def test_wllama_model_name_is_versioned() -> None:
    model = browser_config("./", BrowserOptions())["wllama"]
    assert isinstance(model, dict)
    if model["model"] is None:
        pytest.skip("vendor/ not populated (scripts/setup_browser.sh)")
    assert re.fullmatch(r"models/smollm2-135m-instruct-q8_0-[0-9a-f]{12}\.gguf", model["model"])


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


def test_first_party_code_names_no_remote_host() -> None:
    for path in [*BROWSER.glob("*.js"), *BROWSER.glob("engines/*.js"), BROWSER / "chat.css"]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"https?://(?!127\.0\.0\.1|localhost)", text), path.name
