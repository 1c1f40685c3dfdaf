"""The sk-words/2 tokenizer against the shared test vectors the JavaScript twin reads too."""

from __future__ import annotations

import json
import random
from pathlib import Path

from site_knowledge.retrieval.lexical import BM25
from site_knowledge.retrieval.tokenizer import fold_plural, tokenize

VECTORS = Path(__file__).parent / "data" / "retrieval_vectors.json"


def test_shared_tokenizer_vectors():
    cases = json.loads(VECTORS.read_text(encoding="utf-8"))["tokenizer"]
    assert len(cases) >= 10
    for case in cases:
        assert tokenize(case["text"]) == case["tokens"], case["text"]


def test_plural_folding():
    assert [fold_plural(w) for w in ["policies", "racks", "class", "status", "analysis", "bus"]] == [
        "policy", "rack", "class", "status", "analysis", "bus",
    ]


def test_idf_stays_positive_for_terms_in_most_documents():
    index = BM25([["rack", "cable"], ["rack"], ["rack", "power"]], k1=1.2, b=0.75)
    assert index.idf(3) > 0
    assert index.idf(2) > 0
    scores = index.scores(["rack"])
    assert (scores > 0).all()
    assert index.coverage(["rack", "banana"]) < 0.5
    assert index.coverage(["rack", "cable"]) == 1.0


def test_cjk_runs_become_overlapping_pairs_and_a_lone_character_stays():
    assert tokenize("依赖注入") == ["依赖", "赖注", "注入"]
    assert tokenize("和") == ["和"]
    assert tokenize("한국어 설치") == ["한국", "국어", "설치"]


def test_cjk_inside_a_word_run_is_split_from_the_latin_part():
    assert tokenize("FastAPI的依赖") == ["fastapi", "的依", "依赖"]
    assert tokenize("ｶﾀｶﾅ") == ["カタ", "タカ", "カナ"], "NFKC first: half-width kana"


def test_text_without_cjk_keeps_every_token_of_sk_words_1():
    text = "Racks' policies: the analyses of Zürich's buses, v4.2 and snake_case"
    assert tokenize(text) == ["rack", "policy", "analyse", "zürich", "buse", "v4", "2",
                              "snake", "case"]


def test_ascii_text_splits_as_the_unicode_rule_does():
    """ASCII text takes a faster path; a no-break space (not a word character, not ASCII)
    sends the same text down the Unicode path, which must give the same tokens."""
    rng = random.Random(7)
    every_ascii = "".join(chr(code) for code in range(128))
    texts = [every_ascii, "Set RETRY_ON=5 in v2.3.1 (see `docs_reader`), 1st-class C++ APIs!"]
    texts += ["".join(rng.choice(every_ascii) for _ in range(120)) for _ in range(500)]
    for text in texts:
        assert tokenize(text) == tokenize(text + "\u00a0"), text
