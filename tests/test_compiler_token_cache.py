"""Tokens cached by text: the tokenizer's own tokens, read back by a later build without
tokenizing, dropped when the code or the stopwords change, and only the latest build's kept."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from site_knowledge.compiler import token_cache
from site_knowledge.compiler.token_cache import TokenCache
from site_knowledge.retrieval.tokenizer import STOPWORDS, tokenize

STOP = frozenset(STOPWORDS)
TEXTS = ["Guide > Setup: Install it with `pip install site-knowledge`.",
         "Guide: 安装后运行 mkdocs build — the café's naïve résumé.", ""]


def _no_tokenizing(monkeypatch) -> None:
    def refuse(text: str, stopwords: frozenset[str]) -> list[str]:
        raise AssertionError("tokenized again")
    monkeypatch.setattr(token_cache, "tokenize", refuse)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(), max_size=4))
def test_cached_tokens_are_the_tokenizers_own_before_and_after_a_save(tmp_path_factory, texts):
    folder = tmp_path_factory.mktemp("tokens")
    first = TokenCache(folder, "site", STOP)
    expected = [tokenize(text, STOP) for text in texts]
    assert list(first.tokens(texts)) == expected
    first.save()
    assert list(TokenCache(folder, "site", STOP).tokens(texts)) == expected


def test_a_later_build_reads_the_tokens_without_tokenizing(tmp_path, monkeypatch):
    first = TokenCache(tmp_path, "site", STOP)
    expected = first.tokens(TEXTS)
    first.save()
    _no_tokenizing(monkeypatch)
    assert list(TokenCache(tmp_path, "site", STOP).tokens(iter(TEXTS))) == list(expected)


def test_new_stopwords_another_site_or_new_code_tokenize_again(tmp_path, monkeypatch):
    cache = TokenCache(tmp_path, "site", STOP)
    cache.tokens(TEXTS[:1])
    cache.save()
    calls = []
    monkeypatch.setattr(token_cache, "tokenize",
                        lambda text, stopwords: calls.append(len(stopwords)) or tokenize(text, stopwords))
    assert TokenCache(tmp_path, "site", frozenset()).tokens(TEXTS[:1])[0] == tokenize(TEXTS[0], frozenset())
    TokenCache(tmp_path, "another site", STOP).tokens(TEXTS[:1])
    monkeypatch.setattr(token_cache, "code_fingerprint", lambda: "changed")
    TokenCache(tmp_path, "site", STOP).tokens(TEXTS[:1])
    assert calls == [0, len(STOP), len(STOP)]


def test_a_save_keeps_the_latest_builds_texts_and_a_bad_file_is_ignored(tmp_path):
    cache = TokenCache(tmp_path, "site", STOP)
    cache.tokens(TEXTS)
    cache.save()
    later = TokenCache(tmp_path, "site", STOP)
    later.tokens(TEXTS[1:2])
    later.save()
    stored = json.loads(later.path.read_text(encoding="utf-8"))
    assert list(stored["entries"].values()) == [" ".join(tokenize(TEXTS[1], STOP))]
    later.path.write_text("{not json", encoding="utf-8")
    assert TokenCache(tmp_path, "site", STOP).tokens(TEXTS[1:2])[:] == [tokenize(TEXTS[1], STOP)]


def test_nothing_is_written_when_the_texts_are_those_read(tmp_path):
    cache = TokenCache(tmp_path, "site", STOP)
    cache.tokens(TEXTS)
    cache.save()
    cache.path.write_text(cache.path.read_text(encoding="utf-8") + " ", encoding="utf-8")
    again = TokenCache(tmp_path, "site", STOP)
    again.tokens(TEXTS)
    again.save()
    assert again.path.read_text(encoding="utf-8").endswith(" "), "a rewrite drops the mark"
