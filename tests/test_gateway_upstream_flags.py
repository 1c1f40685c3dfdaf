"""How an upstream is named: ``UpstreamSpec`` and its text form, the ``gateway`` command's
``--upstream`` flags and the API key, read from a variable or a file, never shown."""

from __future__ import annotations

import argparse

import pytest

from site_knowledge.gateway.cli import (
    AccessError,
    describe_upstreams,
    register,
    upstream_settings,
)
from site_knowledge.gateway.config import GatewayConfig, UpstreamSpec
from site_knowledge.gateway.upstream_openai import OpenAIUpstream

KEY = "sk-test-4f1d9c"


def gateway_args(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["gateway", "--artifact", "site", "--mode", "public", *flags])


@pytest.mark.parametrize("text, kind, url", [
    ("http://127.0.0.1:8081", "llama", "http://127.0.0.1:8081"),
    ("llama+http://127.0.0.1:8081", "llama", "http://127.0.0.1:8081"),
    ("openai+http://127.0.0.1:11434/v1", "openai", "http://127.0.0.1:11434/v1"),
    ("openai+https://gpu.example.org/llm", "openai", "https://gpu.example.org/llm"),
])
def test_the_text_form_names_the_kind_before_the_url(text, kind, url):
    spec = UpstreamSpec.parse(text)
    assert (spec.kind, spec.url, spec.model, spec.api_key) == (kind, url, None, None)


@pytest.mark.parametrize("text, reason", [
    ("ollama+http://127.0.0.1:11434", "unknown kind 'ollama'"),
    ("127.0.0.1:8081", "not an http(s) URL"),
    ("openai+ftp://host/v1", "not an http(s) URL"),
    ("openai+http://user:sk-secret@host/v1", "no credentials"),
    ("http://host:8081/?key=1", "no credentials, query or fragment"),
])
def test_a_bad_upstream_is_refused_with_its_reason(text, reason):
    with pytest.raises(ValueError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        UpstreamSpec.parse(text)
    with pytest.raises(ValueError, match="upstream"):
        GatewayConfig(upstreams=(text,))


@pytest.mark.parametrize("url, api", [
    ("http://h:11434/v1", "http://h:11434/v1"),
    ("http://h:11434/v1/", "http://h:11434/v1"),
    ("http://h:8000", "http://h:8000/v1"),
    ("https://gpu.example.org/llm/v1", "https://gpu.example.org/llm/v1"),
])
def test_the_openai_base_url_is_taken_with_or_without_v1(url, api):
    upstream = OpenAIUpstream(UpstreamSpec(url, "openai"), client=None, limits=None)  # type: ignore[arg-type]
    assert upstream.chat_url == api + "/chat/completions"
    assert upstream.root + "/v1" == api


def test_the_openai_kind_sends_only_standard_fields_and_its_model():
    upstream = OpenAIUpstream(UpstreamSpec("http://h/v1", "openai", "qwen2.5:1.5b"),
                              client=None, limits=None)  # type: ignore[arg-type]
    body = upstream.body({"id_slot": 1, "cache_prompt": True, "messages": [], "max_tokens": 9,
                          "temperature": 0, "stop": ["\nQuestion:"], "repeat_penalty": 1.1,
                          "repeat_last_n": 128, "chat_template_kwargs": {},
                          "response_format": {"type": "json_object"}})
    assert body == {"messages": [], "max_tokens": 9, "temperature": 0, "stop": ["\nQuestion:"],
                    "response_format": {"type": "json_object"}, "model": "qwen2.5:1.5b",
                    "stream": True, "stream_options": {"include_usage": True}}


def test_flags_describe_the_upstream_before_them_and_the_key_comes_from_a_variable(
        monkeypatch):
    monkeypatch.setenv("GPU_KEY", f"  {KEY}\n")
    args = gateway_args("--upstream", "http://127.0.0.1:8081",
                        "--upstream", "openai+https://gpu.example.org/v1",
                        "--upstream-model", "Qwen/Qwen2.5-1.5B-Instruct",
                        "--upstream-key-env", "GPU_KEY")
    local, remote = upstream_settings(args)
    assert (local.kind, local.model, local.api_key) == ("llama", None, None)
    assert (remote.kind, remote.model) == ("openai", "Qwen/Qwen2.5-1.5B-Instruct")
    assert remote.headers == {"Authorization": f"Bearer {KEY}"} and local.headers == {}
    shown = describe_upstreams((local, remote)) + repr(GatewayConfig(upstreams=(local, remote)))
    assert KEY not in shown and "(API key)" in shown


def test_the_key_comes_from_the_first_line_of_a_file(tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text(f"{KEY}\nsecond line\n", encoding="utf-8")
    args = gateway_args("--upstream", "openai+http://127.0.0.1:1234/v1",
                        "--upstream-key-file", str(key_file))
    assert upstream_settings(args)[0].api_key == KEY


@pytest.mark.parametrize("flags, reason", [
    (("--upstream-key-env", "NO_SUCH_KEY_VARIABLE"), r"\$NO_SUCH_KEY_VARIABLE holds no API key"),
    (("--upstream-key-file", "/nonexistent/key"), "cannot read --upstream-key-file"),
    (("--upstream-key-env", "A", "--upstream-key-file", "/k"), "exclude each other"),
    (("--upstream-model", "a", "--upstream-model", "b"), "--upstream-model given twice"),
])
def test_a_key_that_cannot_be_had_stops_the_start_naming_where_it_was_looked_for(
        monkeypatch, flags, reason):
    monkeypatch.delenv("NO_SUCH_KEY_VARIABLE", raising=False)
    args = gateway_args("--upstream", "openai+http://127.0.0.1:1234/v1", *flags)
    with pytest.raises(AccessError, match=reason):
        upstream_settings(args)


def test_an_upstream_flag_before_any_upstream_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        gateway_args("--upstream-model", "m", "--upstream", "http://127.0.0.1:8081")
    assert "describes the --upstream before it" in capsys.readouterr().err
