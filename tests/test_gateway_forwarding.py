"""Forwarding headers as proxies write them: RFC 7239 ``Forwarded`` (quoted IPv6, ports,
obfuscated nodes, several header lines), ``X-Forwarded-For`` lists, and ``--trusted-proxy``
values."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from site_knowledge.gateway.forwarding import (
    ProxyTrust,
    forwarded_chain,
    forwarded_for,
    parse_address,
    parse_network,
)

RFC_EXAMPLES = [
    # RFC 7239 section 4 and 7.4 examples.
    (['for="_gazonk"'], ["_gazonk"]),
    (['For="[2001:db8:cafe::17]:4711"'], ["[2001:db8:cafe::17]:4711"]),
    (["for=192.0.2.60;proto=http;by=203.0.113.43"], ["192.0.2.60"]),
    (["for=192.0.2.43, for=198.51.100.17"], ["192.0.2.43", "198.51.100.17"]),
    (["for=192.0.2.43,for=\"[2001:db8:cafe::17]\",for=unknown"],
     ["192.0.2.43", "[2001:db8:cafe::17]", "unknown"]),
    # Two header lines are one list, in order.
    (["for=192.0.2.43", "for=198.51.100.17;by=203.0.113.60;proto=http;host=example.com"],
     ["192.0.2.43", "198.51.100.17"]),
    # Quoted strings may hold the separators, and backslash escapes.
    (['host="a,b;c";for="192.0.2.1:80", for="\\[2001:db8::1\\]"'],
     ["192.0.2.1:80", "[2001:db8::1]"]),
    # A hop without for= is unknown; empty list elements are no hops.
    (["proto=https, , for=192.0.2.9"], ["unknown", "192.0.2.9"]),
    # Malformed input never raises: a pair without "=" is skipped, a quote runs to the end.
    (["for, for=192.0.2.5;junk"], ["192.0.2.5"]),
    (['for="192.0.2.7'], ["192.0.2.7"]),
]


@pytest.mark.parametrize(("lines", "nodes"), RFC_EXAMPLES)
def test_forwarded_for_nodes(lines: list[str], nodes: list[str]) -> None:
    assert forwarded_for(lines) == nodes


@pytest.mark.parametrize(("text", "address"), [
    ("192.0.2.7", "192.0.2.7"),
    (" 192.0.2.7:4711 ", "192.0.2.7"),
    ("2001:db8::1", "2001:db8::1"),
    ("[2001:db8::1]", "2001:db8::1"),
    ("[2001:DB8:cafe::17]:4711", "2001:db8:cafe::17"),
    ("unknown", None),
    ("_hidden", None),
    ("[2001:db8::1", None),
    ("999.1.1.1", None),
    ("", None),
])
def test_parse_address(text: str, address: str | None) -> None:
    parsed = parse_address(text)
    assert (str(parsed) if parsed else None) == address


addresses = st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6))
ports = st.none() | st.integers(min_value=1, max_value=65535)


def _node(address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int | None) -> str:
    """How a proxy writes a node: IPv6 in brackets, quoted whenever it holds ':' or '['."""
    host = f"[{address}]" if address.version == 6 else str(address)
    node = host if port is None else f"{host}:{port}"
    return f'"{node}"' if ":" in node or "[" in node else node


@given(hops=st.lists(st.tuples(addresses, ports), min_size=1, max_size=6),
       split=st.integers(min_value=0, max_value=6))
def test_forwarded_round_trip(hops, split) -> None:
    elements = [f"for={_node(a, p)};proto=https" for a, p in hops]
    lines = [", ".join(elements[:split]), ", ".join(elements[split:])]
    parsed = [parse_address(node) for node in forwarded_for([line for line in lines if line])]
    assert parsed == [a for a, _ in hops]


def test_forwarded_chain_splits_list_headers_across_lines() -> None:
    lines = ["203.0.113.7, 198.51.100.2", "192.0.2.1"]
    assert forwarded_chain("x-forwarded-for", lines) == ["203.0.113.7", "198.51.100.2",
                                                         "192.0.2.1"]
    assert forwarded_chain("x-real-ip", [" 192.0.2.9 "]) == ["192.0.2.9"]
    assert forwarded_chain("forwarded", ["for=192.0.2.1"]) == ["192.0.2.1"]


def test_parse_network_accepts_cidrs_and_bare_addresses() -> None:
    assert str(parse_network("127.0.0.1/32")) == "127.0.0.1/32"
    assert str(parse_network("10.0.0.0/8")) == "10.0.0.0/8"
    assert str(parse_network("::1")) == "::1/128"
    assert str(parse_network("192.0.2.4")) == "192.0.2.4/32"


@pytest.mark.parametrize(("text", "message"), [
    ("127.0.0.5/8", "'127.0.0.5/8' has host bits set; did you mean 127.0.0.0/8?"),
    ("localhost", "'localhost' is not an IP network"),
    ("10.0.0.0/33", "'10.0.0.0/33' is not an IP network"),
])
def test_parse_network_names_the_bad_value(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("?", r"\?")):
        parse_network(text)


def test_proxy_trust_refuses_an_unknown_header() -> None:
    with pytest.raises(ValueError, match="'x-client-ip' is not one of x-forwarded-for"):
        ProxyTrust(header="x-client-ip")
