"""The browser's retrieval is the Python retrieval: shared vectors, the tokenizer on hard text,
and real rankings on netbox-docs in real Chromium (query embedded by ONNX Runtime Web)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from browser_sites import REPO, build_netbox_site, require_browser, run_node

from site_knowledge.retrieval import load_index
from site_knowledge.retrieval.tokenizer import STOPWORDS, tokenize

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node missing (scripts/setup_browser.sh)")
QUESTIONS = REPO / "evals" / "netbox" / "questions.jsonl"

HARD_TEXT = [
    "Ünïcödé Straße, ﬁnance ＡＰＩ and Ⅻ chapters",
    "policies, bodies, stories and ties; glasses, status, analysis, bus, yes",
    "IPv4/IPv6 prefixes: 10.0.0.0/8 & 2001:db8::/32 — VLAN 100 on eth0_1",
    "a b c 1 2 3 x86_64 C++ C# it's don't",
    "日本語のテキスト 한국어 текст на русском العربية",
    "NetBox's REST API (v4.2) returns JSON; see `dcim.devices`!",
    "",
    "    \t\n",
    "ﬀ ﬃ ½ ² ³ ① ⑩ ｶﾀｶﾅ",
    "Caches caches CACHES cachés; series species; iss ass pus crisis",
]


@needs_node
def test_shared_vectors_node() -> None:
    done = subprocess.run(
        [str(NODE), "--test", str(REPO / "tests" / "browser" / "vectors.test.mjs")],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout


@needs_node
def test_tokenizer_matches_python_on_hard_text(tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"texts": HARD_TEXT, "stopwords": list(STOPWORDS)}))
    script = (
        "import { readFileSync } from 'node:fs';"
        "import { tokenize } from './site_knowledge/browser/retrieval.js';"
        f"const c = JSON.parse(readFileSync({json.dumps(str(cases))}, 'utf8'));"
        "const s = new Set(c.stopwords);"
        "console.log(JSON.stringify(c.texts.map((t) => tokenize(t, s))));"
    )
    done = subprocess.run([str(NODE), "--input-type=module", "-e", script], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(done.stdout)
    for text, tokens in zip(HARD_TEXT, got, strict=True):
        assert tokens == tokenize(text, frozenset(STOPWORDS)), text


@pytest.mark.browser
@pytest.mark.slow
def test_netbox_rankings_match_python(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Top-3 identical and top-10 overlap >= 8 on >= 20 answerable questions; same gate."""
    require_browser()
    site = build_netbox_site(tmp_path_factory.mktemp("netbox-chat"))
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines()]
    batch = tmp_path_factory.mktemp("batch")
    (batch / "questions.json").write_text(json.dumps(questions))
    run_node("search_batch.mjs", str(site), str(batch / "questions.json"),
             str(batch / "js.json"), "10")
    browser = json.loads((batch / "js.json").read_text())
    assert browser["offsite"] == []
    index = load_index(site)
    compared = 0
    for question, js in zip(questions, browser["results"], strict=True):
        py = index.search(question, top_k=10)
        assert js["gate"]["answerable"] == py.answerable, (question, js["gate"], py.gate)
        assert abs(js["gate"]["cosine"] - py.gate["cosine"]) < 2e-3, question
        if not py.answerable:
            continue
        compared += 1
        expected = [hit.passage.id for hit in py.hits]
        assert js["ids"][:3] == expected[:3], question
        assert len(set(js["ids"]) & set(expected)) >= 8, question
    assert compared >= 20
