"""Regenerate tests/data/retrieval_vectors.json and its fixture artifact.

The file is the contract between the Python and JavaScript retrieval: tokenizer cases
(text -> tokens) and ranking cases over a small real artifact: the question and its earlier
questions, the retrieval query they make, its embedding, the ranking query (without the
question's premise names) and its embedding where they differ, the gate's inputs and verdict, and
the ranked passage ids in every mode with the gate open. The fixture's candidate lists are shorter than its
passage count, so a reader that ranks everything in a single mode fails. Run after a
deliberate change to SPEC.md: ``.venv/bin/python scripts/make_retrieval_vectors.py``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from site_knowledge.compiler.compiler import (
    DEFAULT_RETRIEVAL,
    BuildOptions,
    PageInput,
    PromptParts,
    compile_knowledge,
)
from site_knowledge.compiler.embed_cache import EmbeddingCache
from site_knowledge.embedding import Encoder
from site_knowledge.retrieval import KnowledgeIndex, load_index
from site_knowledge.retrieval.artifact import load_artifact
from site_knowledge.retrieval.artifact_form import SCHEMA_VERSION
from site_knowledge.retrieval.gate import OPEN_GATE
from site_knowledge.retrieval.index import MODES, gate_query, retrieval_query
from site_knowledge.retrieval.tokenizer import TOKENIZER_VERSION, tokenize

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
FIXTURE = DATA / "fixture-artifact"

TOKENIZER_TEXTS = [
    "Hello, World!",
    "The racks' power feeds: 2 PDUs per rack.",
    "Policies and statuses of the classes",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ and ﬁ ligature",
    "Zürich, Wien & São Paulo",
    "snake_case-and-kebab-case v4.2",
    "I am a b c d 7 x",
    "Don't stop; it's Teo's cat",
    "日本語のテキスト and 中文",
    "Résumé of the analyses: bus, status, glass",
    "ÇA VA? İstanbul",
    "如何安装FastAPI？依赖注入",
    "FastAPI的路径参数 和 字",
    "ｶﾀｶﾅ カタカナ ひらがなtext 一",
    "한국어 문서를 설치하려면",
    "𠀀𠀁 々々",
    "",
]
PAGES = [
    ("racks.md", "racks/", "Racks", "<h2 id='elevations'>Rack elevations</h2><p>Racks hold "
     "devices in numbered units. An elevation shows the front and rear faces.</p>"
     "<h2 id='reservations'>Reservations</h2><p>A reservation sets units aside for a future "
     "install by a tenant.</p>"),
    ("cables.md", "cables/", "Cables", "<h2 id='tracing'>Tracing</h2><p>Trace a cable from "
     "an interface through patch panels to its far end.</p><h2 id='colours'>Colours</h2>"
     "<p>Each cable can carry a colour and a length in metres.</p>"),
    ("power.md", "power/", "Power", "<h2 id='feeds'>Power feeds</h2><p>A power feed connects "
     "a panel to a rack's power distribution unit.</p><h2 id='panels'>Panels</h2><p>Panels "
     "sit in a site and feed several racks.</p>"),
    ("install.md", "install/", "Installation", "<h2 id='postgres'>PostgreSQL</h2><p>Install "
     "the database server and create a user.</p><h2 id='upgrade'>Upgrading</h2><p>Read the "
     "release notes, back up the database, then run the upgrade script.</p>"),
    ("about.md", "about/", "About", "<p>This documentation covers data centre "
     "infrastructure modelling: racks, cables and power.</p>"),
    ("zh/racks.md", "zh/racks/", "机柜", "<h2 id='reservations'>预留</h2><p>预留为租户将来的"
     "安装保留机柜单元。</p>"),
    ("zh/cables.md", "zh/cables/", "线缆", "<h2 id='tracing'>追踪</h2><p>从接口经过配线架追踪"
     "线缆到远端。</p>"),
]
QUERIES = [
    ("How do I trace a cable?", []),
    ("rack reservations for a tenant", []),
    ("upgrade the database", []),
    ("what feeds a PDU", []),
    ("What colour is it?", ["How long can a cable be?"]),
    ("How do I bake sourdough bread?", []),
    ("colour", []),
    ("numbered units", []),
    ("What colour is it?", ["How long can a cable be?", "   ", "???"]),
    ("What colour is it?", ["How do I trace a cable?", "\u3000\x1c"]),
    ("What colour is it?", ["!!!"]),
    ("And the panels?", ["How do I trace a cable?", "What feeds a rack?"]),
    ("", []),
    ("How do I trace a cable into Kubernetes?", []),
    ("What feeds the racks at Equinix?", ["How do I trace a cable?"]),
    ("Kubernetes?", []),
    ("What is the capital of France?", ["How do I trace a cable?"]),
    ("Where does it end at Equinix?", ["How do I trace a cable?"]),
]
LANG_QUERIES = [
    ("如何追踪线缆？", [], "zh"),
    ("如何追踪线缆？", [], "zh-CN"),
    ("如何追踪线缆？", [], None),
    ("How do I trace a cable?", [], "zh"),
    ("How do I trace a cable?", [], "en-US"),
    ("rack reservations for a tenant", [], "fr"),
]
"""Questions asked on a page in a language (the box sends the page's): the zh pages are "zh",
the rest the site's "en"."""
RETRIEVAL = {**DEFAULT_RETRIEVAL, "candidates": 3, "page_candidates": 2}
"""Short candidate lists: 10 passages, 3 candidates, so single modes must stop at 3."""


def main() -> None:
    """Compile the fixture artifact and write the vectors file."""
    with tempfile.TemporaryDirectory() as cache_dir:
        cache = EmbeddingCache(Encoder(), Path(cache_dir))
        pages = [PageInput(src, url, title, "", html, lang="zh" if src.startswith("zh/") else "")
                 for src, url, title, html in PAGES]
        prompt = PromptParts("You answer from the excerpts.", "Not on this site.", "No model.")
        options = BuildOptions("Fixture", "", FIXTURE, retrieval=RETRIEVAL, language="en")
        compile_knowledge(pages, [], prompt, options, cache)
        for stale in FIXTURE.glob(".*.tmp"):
            stale.unlink()
        index = load_index(FIXTURE / "site-knowledge.json", cache.encoder)
        ranking = []
        ungated = KnowledgeIndex({**index.artifact, "gate": OPEN_GATE}, _blob(), cache.encoder)
        turns = int(index.artifact["retrieval"]["followup_turns"])
        for question, history, lang in [(q, h, None) for q, h in QUERIES] + LANG_QUERIES:
            query = gate_query(question, history, turns)
            # The readers' tests search with the stored (rounded) vector: so does the file.
            vector = np.asarray(_rounded(cache.encoder.encode([query])[0]), dtype=np.float32)
            ranking_query = retrieval_query(index.words.without_unknown(question), history, turns)
            case = {"question": question, "history": history, "query": query,
                    "terms": tokenize(query), "query_vector": _rounded(vector), "modes": {}}
            if lang is not None:
                case["lang"] = lang
            if ranking_query != query:
                case["ranking_query"] = ranking_query
                case["ranking_vector"] = _rounded(cache.encoder.encode([ranking_query])[0])
            gated = index.search(question, history, "hybrid", 4, query_vector=vector, lang=lang)
            case["answerable"] = gated.answerable
            case["gate"] = gated.gate
            case["kept_to"] = gated.lang
            for mode in MODES:
                result = ungated.search(question, history, mode, 4, query_vector=vector,
                                        lang=gated.lang)
                case["modes"][mode] = [hit.passage.id for hit in result.hits]
            ranking.append(case)
    document = {
        "spec": f"{SCHEMA_VERSION} {TOKENIZER_VERSION}",
        "artifact": "fixture-artifact/site-knowledge.json",
        "tokenizer": [{"text": text, "tokens": tokenize(text)} for text in TOKENIZER_TEXTS],
        "ranking": ranking,
    }
    (DATA / "retrieval_vectors.json").write_text(
        json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _rounded(vector: Iterable[float]) -> list[float]:
    return [round(float(x), 7) for x in vector]


def _blob() -> bytes:
    return load_artifact(FIXTURE / "site-knowledge.json")[1]


if __name__ == "__main__":
    main()
