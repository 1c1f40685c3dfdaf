"""The gateway's two modes and who counts as a visitor.

Public mode (no token): anyone within the origins and limits. Private mode (a token): every
client presents it, loopback included, even through a forwarder that adds no header.
Forwarding headers are believed only from ``--trusted-proxy`` peers, and then the visitor is
the right-most untrusted address. The HTTP tests run the app under the same uvicorn settings
as the ``gateway`` command, with its configuration read from the command's own flags."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from deploy_fixtures import TcpRelay
from gateway_fixtures import LogRecorder, ThreadedServer, ask, free_port, metrics

from site_knowledge.gateway import policy
from site_knowledge.gateway.app import create_app
from site_knowledge.gateway.cli import AccessError, access_settings, describe_access, register
from site_knowledge.gateway.config import GatewayConfig
from site_knowledge.gateway.forwarding import ProxyTrust, parse_network
from site_knowledge.gateway.policy import Refusal, check_token, visitor_key
from site_knowledge.retrieval import KnowledgeIndex, load_index

OFF_TOPIC = "What is the best recipe for banana bread?"  # refused by the gate: no model needed
ORIGIN = "https://teo.github.io"
LOOPBACK = ProxyTrust((parse_network("127.0.0.1/32"),))


def test_public_mode_checks_no_token() -> None:
    check_token({}, None)
    check_token({"authorization": "Bearer anything"}, None)


@pytest.mark.parametrize("authorization", [None, "Bearer nope", "Basic s3cret", "s3cret",
                                           "Bearer s3cret2", "Bearer "])
def test_private_mode_refuses_every_client_without_the_token(authorization) -> None:
    headers = {} if authorization is None else {"authorization": authorization}
    with pytest.raises(Refusal) as refused:
        check_token(headers, "s3cret")
    assert (refused.value.status, refused.value.code) == (401, "unauthorized")


def test_private_mode_admits_the_token() -> None:
    check_token({"authorization": "Bearer s3cret"}, "s3cret")
    check_token({"authorization": "bearer  s3cret "}, "s3cret")


XFF = "x-forwarded-for"
VISITORS = [
    # (peer, headers, trust, visitor)
    ("203.0.113.9", [(XFF, "198.51.100.1")], LOOPBACK, "203.0.113.9"),
    ("127.0.0.1", [(XFF, "198.51.100.1")], ProxyTrust(), "127.0.0.1"),
    ("127.0.0.1", [(XFF, "198.51.100.1")], LOOPBACK, "198.51.100.1"),
    # A visitor's own X-Forwarded-For is appended to, so the spoofed entries stay on the left.
    ("127.0.0.1", [(XFF, "1.2.3.4, 5.6.7.8, 198.51.100.1")], LOOPBACK, "198.51.100.1"),
    # Two trusted hops (a CDN in 192.0.2.0/24, then nginx on loopback).
    ("127.0.0.1", [(XFF, "1.2.3.4, 198.51.100.1, 192.0.2.10")],
     ProxyTrust((parse_network("127.0.0.1/32"), parse_network("192.0.2.0/24"))),
     "198.51.100.1"),
    # Every hop trusted: the left-most.
    ("127.0.0.1", [(XFF, "127.0.0.1")], LOOPBACK, "127.0.0.1"),
    # Several header lines are one list; ports and brackets are dropped.
    ("127.0.0.1", [(XFF, "1.2.3.4"), ("X-Forwarded-For", "198.51.100.1:5555")], LOOPBACK,
     "198.51.100.1"),
    # A trusted proxy that sent no header: the proxy itself.
    ("127.0.0.1", [], LOOPBACK, "127.0.0.1"),
    # Only the configured header counts; the others are the visitor's to forge.
    ("127.0.0.1", [(XFF, "198.51.100.1"), ("cf-connecting-ip", "1.2.3.4"),
                   ("x-real-ip", "5.6.7.8"), ("forwarded", "for=9.9.9.9")], LOOPBACK,
     "198.51.100.1"),
    ("127.0.0.1", [(XFF, "1.2.3.4"), ("cf-connecting-ip", "198.51.100.1")],
     ProxyTrust(LOOPBACK.networks, "cf-connecting-ip"), "198.51.100.1"),
    ("127.0.0.1", [("x-real-ip", "198.51.100.1")], ProxyTrust(LOOPBACK.networks, "x-real-ip"),
     "198.51.100.1"),
    ("127.0.0.1", [("forwarded", 'for=1.2.3.4, for="[2001:db8:cafe::17]:4711";proto=https')],
     ProxyTrust(LOOPBACK.networks, "forwarded"), "2001:db8:cafe::/64"),
    # An obfuscated or unknown right-most node is the key as written.
    ("127.0.0.1", [("forwarded", "for=1.2.3.4, for=_hidden")],
     ProxyTrust(LOOPBACK.networks, "forwarded"), "node:_hidden"),
    # IPv6 visitors are one per /64; IPv4-mapped addresses are their IPv4 address.
    ("2001:db8:1:2:aaaa::1", [], ProxyTrust(), "2001:db8:1:2::/64"),
    ("::ffff:198.51.100.1", [], ProxyTrust(), "198.51.100.1"),
    ("::ffff:127.0.0.1", [(XFF, "198.51.100.1")], LOOPBACK, "198.51.100.1"),
    ("::1", [(XFF, "2001:db8::5")], ProxyTrust((parse_network("::1"),)), "2001:db8::/64"),
]


@pytest.mark.parametrize(("peer", "headers", "trust", "visitor"), VISITORS)
def test_visitor_is_the_right_most_untrusted_address(peer, headers, trust, visitor) -> None:
    assert visitor_key(headers, peer, trust) == visitor


def test_misconfigured_proxies_are_named_once_without_an_address(caplog) -> None:
    policy._warn_once.cache_clear()  # once per process: forget what earlier tests triggered
    with caplog.at_level(logging.WARNING, logger="site_knowledge.gateway.policy"):
        for _ in range(3):
            visitor_key([(XFF, "198.51.100.77")], "127.0.0.1", ProxyTrust())
            visitor_key([], "127.0.0.1", LOOPBACK)
            visitor_key([], "127.0.0.1", ProxyTrust())  # a local client: nothing to say
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert "not a --trusted-proxy" in messages[0] and "sent no x-forwarded-for" in messages[1]
    assert not any("198.51.100.77" in m or "127.0.0.1" in m for m in messages)


def _gateway_args(*flags: str) -> GatewayConfig:
    """The configuration the ``gateway`` command builds from these flags."""
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["gateway", "--artifact", "site", "--upstream",
                              f"http://127.0.0.1:{free_port()}", *flags])
    token, proxies = access_settings(args)
    return GatewayConfig(upstreams=tuple(args.upstream), allow_origins=frozenset(
        args.allow_origin), token=token, proxies=proxies)


def test_cli_flags_set_the_mode_and_the_trusted_proxies(monkeypatch) -> None:
    monkeypatch.delenv("SITE_KNOWLEDGE_GATEWAY_TOKEN", raising=False)
    public = _gateway_args("--mode", "public", "--trusted-proxy", "127.0.0.1/32",
                           "--trusted-proxy", "::1", "--allow-origin", ORIGIN)
    assert public.token is None and public.allow_origins == {ORIGIN}
    assert [str(n) for n in public.proxies.networks] == ["127.0.0.1/32", "::1/128"]
    assert "public" in describe_access("X", None, public.proxies)
    monkeypatch.setenv("SITE_KNOWLEDGE_GATEWAY_TOKEN", "s3cret")
    private = _gateway_args("--mode", "private")
    assert private.token == "s3cret" and private.proxies.networks == ()
    text = describe_access("SITE_KNOWLEDGE_GATEWAY_TOKEN", "s3cret", private.proxies)
    assert "private" in text and "ignored" in text and "s3cret" not in text


@pytest.mark.parametrize(("flags", "variable", "message"), [
    (["--mode", "private"], None, "holds none"),
    (["--mode", "private"], "", "holds none"),
    (["--mode", "private"], "   ", "holds none"),
    (["--mode", "private", "--token-env", "SITE_KNOWLEDGE_GATEWAY_TOKN"], "s3cret", "holds none"),
    (["--mode", "private", "--token-file", "/nonexistent/token"], None, "cannot read"),
    (["--mode", "public"], "s3cret", "holds a token"),
])
def test_private_mode_without_a_token_and_public_mode_with_one_stop_the_start(
        monkeypatch, flags, variable, message) -> None:
    monkeypatch.delenv("SITE_KNOWLEDGE_GATEWAY_TOKEN", raising=False)
    if variable is not None:
        monkeypatch.setenv("SITE_KNOWLEDGE_GATEWAY_TOKEN", variable)
    with pytest.raises(AccessError, match=message):
        _gateway_args(*flags)


def test_the_mode_is_never_guessed(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.delenv("SITE_KNOWLEDGE_GATEWAY_TOKEN", raising=False)
    with pytest.raises(SystemExit):
        _gateway_args()
    assert "the following arguments are required: --mode" in capsys.readouterr().err
    token = tmp_path / "token"
    token.write_text("fr0m-a-file\n", encoding="utf-8")
    assert _gateway_args("--mode", "private", "--token-file", str(token)).token == "fr0m-a-file"


def test_the_gateway_command_refuses_to_start_private_with_an_empty_token(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "site_knowledge.cli", "gateway", "--mode", "private",
         "--artifact", str(tmp_path), "--upstream", "http://127.0.0.1:9"],
        env={**os.environ, "SITE_KNOWLEDGE_GATEWAY_TOKEN": ""}, capture_output=True, text=True,
        timeout=60, check=False)
    assert done.returncode == 2
    assert "--mode private needs a token" in done.stderr and "Traceback" not in done.stderr


def test_an_empty_token_is_no_configuration_and_matches_nothing() -> None:
    with pytest.raises(ValueError, match="not empty"):
        GatewayConfig(upstreams=("http://127.0.0.1:9",), token="")
    for sent in ("Bearer ", "Bearer", "", "bearer  ", "Basic s3cret", "Bearer s3cre",
                 "Bearer s3cret2"):
        with pytest.raises(Refusal):
            check_token({"authorization": sent}, "s3cret")
    check_token({"authorization": "Bearer s3cret"}, "s3cret")


def test_cli_names_a_bad_trusted_proxy(capsys) -> None:
    with pytest.raises(SystemExit):
        _gateway_args("--mode", "public", "--trusted-proxy", "127.0.0.5/8")
    assert "did you mean 127.0.0.0/8?" in capsys.readouterr().err


@pytest.fixture(scope="module")
def index(example_site) -> KnowledgeIndex:
    loaded = load_index(example_site.site_dir)
    loaded.encoder  # noqa: B018
    return loaded


@pytest.fixture
def private_gateway(index, monkeypatch) -> Iterator[str]:
    monkeypatch.setenv("SITE_KNOWLEDGE_GATEWAY_TOKEN", "s3cret")
    with ThreadedServer(create_app(index, _gateway_args("--mode", "private"))) as server:
        yield server.url


def test_private_gateway_refuses_a_header_less_loopback_forwarder(private_gateway) -> None:
    """ssh -R or socat: the gateway sees a loopback peer and no forwarding header."""
    port = int(private_gateway.rsplit(":", 1)[1])
    with TcpRelay(("127.0.0.1", port)) as relay:
        refused = ask(relay.url, OFF_TOPIC)
        assert refused.status == 401 and refused.body["error"]["code"] == "unauthorized"
        admitted = ask(relay.url, OFF_TOPIC, headers={"authorization": "Bearer s3cret"})
        assert admitted.status == 200 and admitted.terminal["finish_reason"] == "refused"
    direct = ask(private_gateway, OFF_TOPIC)
    assert direct.status == 401


def _burst(base: str, n: int, headers: dict[str, str]) -> list[int]:
    return [ask(base, OFF_TOPIC, headers=headers).status for _ in range(n)]


def test_public_gateway_behind_a_trusted_proxy_limits_each_forwarded_visitor(
        index, monkeypatch) -> None:
    """The test client plays nginx on 127.0.0.1, forwarding for two visitors."""
    monkeypatch.delenv("SITE_KNOWLEDGE_GATEWAY_TOKEN", raising=False)
    config = _gateway_args("--mode", "public", "--trusted-proxy", "127.0.0.1/32",
                           "--allow-origin", ORIGIN)
    a = {"origin": ORIGIN, XFF: "198.51.100.1"}
    b = {"origin": ORIGIN, XFF: "198.51.100.2"}
    with LogRecorder() as logs, ThreadedServer(create_app(index, config)) as server:
        other = ask(server.url, OFF_TOPIC, headers={**a, "origin": "https://evil.example"})
        assert other.status == 403 and other.body["error"]["code"] == "origin_not_allowed"
        first = ask(server.url, OFF_TOPIC, headers=a)
        assert first.status == 200 and first.headers["access-control-allow-origin"] == ORIGIN
        assert _burst(server.url, 19, a) == [200] * 19
        limited = ask(server.url, OFF_TOPIC, headers=a)
        assert limited.status == 429 and limited.body["error"]["code"] == "rate_limited"
        assert ask(server.url, OFF_TOPIC, headers=b).status == 200
        # A spoofed entry on the left of A's chain is still A.
        spoofed = ask(server.url, OFF_TOPIC, headers={**a, XFF: "203.0.113.5, 198.51.100.1"})
        assert spoofed.status == 429
        counted = metrics(server.url)
    assert counted["rejections"] == {"origin_not_allowed": 1, "rate_limited": 2}
    text = "\n".join(logs.lines) + str(counted)
    assert "198.51.100" not in text and "203.0.113" not in text


def test_without_trusted_proxy_forwarding_headers_do_not_split_a_peer(
        index, monkeypatch) -> None:
    monkeypatch.delenv("SITE_KNOWLEDGE_GATEWAY_TOKEN", raising=False)
    config = _gateway_args("--mode", "public", "--allow-origin", ORIGIN)
    with ThreadedServer(create_app(index, config)) as server:
        statuses = [ask(server.url, OFF_TOPIC, headers={
            "origin": ORIGIN, XFF: f"198.51.100.{i}", "x-real-ip": f"192.0.2.{i}",
            "cf-connecting-ip": f"203.0.113.{i}", "forwarded": f"for=198.18.0.{i}",
        }).status for i in range(21)]
        assert statuses == [200] * 20 + [429]
        assert httpx.get(server.url + "/healthz", timeout=30).status_code in (200, 503)
