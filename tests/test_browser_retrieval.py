"""The browser's retrieval is the Python retrieval: shared vectors, the tokenizer on hard text,
and real rankings and gate decisions on every eval set's site in real Chromium (query
embedded by ONNX Runtime Web)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from browser_sites import REPO, require_browser, run_node, run_node_tests

from evals.retrieval_sets import SETS, EvalSet
from evals.sites import SITES, build
from site_knowledge.evals.dataset import load_questions
from site_knowledge.retrieval import KnowledgeIndex, load_index
from site_knowledge.retrieval.artifact import load_artifact
from site_knowledge.retrieval.gate import OPEN_GATE
from site_knowledge.retrieval.index import gate_query
from site_knowledge.retrieval.tokenizer import STOPWORDS, tokenize

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node missing (scripts/setup_browser.sh)")

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


def test_shared_vectors_node() -> None:
    run_node_tests("vectors.test.mjs")


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


def _requests_of_our_own(site: Path, offsite: list[str]) -> list[str]:
    """Off-site requests whose host the site's own files do not name (a corpus's theme may
    load web fonts, CDN scripts or its repository's stars; the chat box, whose files are
    left out of the search, must add none)."""
    ours = site / "assets" / "site-knowledge"
    texts = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for pattern in ("*.html", "*.css", "*.js")
        for p in site.rglob(pattern)
        if ours not in p.parents
    )
    return [url for url in offsite if urlsplit(url).netloc not in texts]


@pytest.fixture(scope="session")
def chat_sites(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Real builds of the eval sites with the chat box, one per site for the session."""
    built: dict[str, Path] = {}

    def site(name: str) -> Path:
        if name not in built:
            built[name] = build(SITES[name], tmp_path_factory.mktemp(f"chat-{name}") / "site")
        return built[name]

    return site


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("eval_set", SETS, ids=[s.name for s in SETS])
def test_browser_rankings_and_gate_match_python(eval_set: EvalSet,
                                                chat_sites: Callable[[str], Path],
                                                tmp_path: Path) -> None:
    """Every question of every eval set, follow-ups with their earlier questions, through
    window.siteKnowledge.search in real Chromium (query embedded by ONNX Runtime Web): the
    gate decides the same, and the top 3 (gate open) are identical."""
    require_browser()
    site = chat_sites(eval_set.site)
    questions = load_questions(eval_set.questions)
    items = [{"question": q.question, "history": list(q.history)} for q in questions]
    (tmp_path / "questions.json").write_text(json.dumps(items))
    run_node("search_batch.mjs", str(site), str(tmp_path / "questions.json"),
             str(tmp_path / "js.json"), "10")
    browser = json.loads((tmp_path / "js.json").read_text())
    assert not _requests_of_our_own(site, browser["offsite"])
    index = load_index(site)
    artifact, blob = load_artifact(site)
    ungated = KnowledgeIndex({**artifact, "gate": OPEN_GATE}, blob, index.encoder)
    for q, js in zip(questions, browser["results"], strict=True):
        vector = index.embed(gate_query(q.question, q.history, 1))
        py = index.search(q.question, q.history, top_k=10, query_vector=vector)
        where = (q.id, js["gate"], py.gate)
        assert js["gate"]["answerable"] == py.answerable, where
        assert abs(js["gate"]["cosine"] - py.gate["cosine"]) < 2e-3, where
        assert abs(js["gate"]["elsewhere"] - py.gate["elsewhere"]) < 2e-3, where
        expected = [h.passage.id for h in
                    ungated.search(q.question, q.history, top_k=10, query_vector=vector).hits]
        assert js["ids"][:3] == expected[:3], (q.id, js["ids"], expected)
        assert len(set(js["ids"]) & set(expected)) >= 8, (q.id, js["ids"], expected)
