"""Forwarding headers and the proxies whose word on them is believed.

A reverse proxy or tunnel in front of the gateway hides the visitor's address behind its own.
It names the visitor in a header: ``X-Forwarded-For`` (a list, one address per hop, appended
by each proxy), RFC 7239 ``Forwarded`` (the same list with ``for=`` parameters), or a single
address in ``X-Real-IP`` or ``CF-Connecting-IP``. Anyone can send these headers, so the gateway
reads them only from peers inside ``--trusted-proxy`` networks, and only the one header those
proxies are configured to set (``--proxy-header``): a proxy passes on every header it does not
set itself, and a header it leaves alone is the visitor's to forge.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

PROXY_HEADERS = ("x-forwarded-for", "forwarded", "x-real-ip", "cf-connecting-ip")
DEFAULT_PROXY_HEADER = "x-forwarded-for"


def parse_network(text: str) -> Network:
    """A ``--trusted-proxy`` value: a CIDR (``127.0.0.1/32``, ``::1/128``) or one address.

    Raises:
        ValueError: naming the value and what is wrong with it.
    """
    value = text.strip()
    try:
        return ipaddress.ip_network(value, strict=True)
    except ValueError as error:
        try:
            loose = ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise ValueError(f"{text!r} is not an IP network (e.g. 127.0.0.1/32 or "
                             f"10.0.0.0/8): {error}") from None
        raise ValueError(f"{text!r} has host bits set; did you mean {loose}?") from None


@dataclass(frozen=True)
class ProxyTrust:
    """The peers whose forwarding header is believed, and which header that is.

    With no networks (the default) every forwarding header is ignored and the visitor is the
    TCP peer.
    """

    networks: tuple[Network, ...] = ()
    header: str = DEFAULT_PROXY_HEADER

    def __post_init__(self) -> None:
        if self.header not in PROXY_HEADERS:
            raise ValueError(f"proxy header {self.header!r} is not one of "
                             f"{', '.join(PROXY_HEADERS)}")

    def trusts(self, address: Address) -> bool:
        """Whether ``address`` is a trusted proxy (an IPv4-mapped IPv6 address, as a dual-stack
        socket reports an IPv4 peer, counts as its IPv4 address)."""
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)


def parse_address(text: str) -> Address | None:
    """An address as proxies write it: ``192.0.2.7``, ``192.0.2.7:4711``, ``2001:db8::1``,
    ``[2001:db8::1]`` or ``[2001:db8::1]:4711``; None for anything else (``unknown``, an
    RFC 7239 obfuscated identifier like ``_hidden``, garbage)."""
    value = text.strip()
    if value.startswith("["):
        value, bracket, _port = value[1:].partition("]")
        if not bracket:
            return None
    elif value.count(":") == 1:
        value = value.partition(":")[0]
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def _scan_forwarded(text: str) -> list[dict[str, str]]:
    """RFC 7239 section 4: comma-separated elements of ``;``-separated ``name=value`` pairs,
    values a token or a quoted string with backslash escapes. Never raises: a malformed pair
    is skipped, an unterminated quoted string runs to the end."""
    elements: list[dict[str, str]] = []
    pairs: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in " \t;":
            i += 1
            continue
        if char == ",":
            elements.append(pairs)
            pairs = {}
            i += 1
            continue
        start = i
        while i < n and text[i] not in "=;,":
            i += 1
        name = text[start:i].strip().lower()
        if i >= n or text[i] != "=":
            continue
        i += 1
        if i < n and text[i] == '"':
            i += 1
            chars: list[str] = []
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                chars.append(text[i])
                i += 1
            i += 1
            value = "".join(chars)
        else:
            start = i
            while i < n and text[i] not in ";,":
                i += 1
            value = text[start:i].strip()
        if name:
            pairs[name] = value
    elements.append(pairs)
    return [element for element in elements if element]


def forwarded_for(lines: Iterable[str]) -> list[str]:
    """The ``for=`` node of each hop in ``Forwarded`` header lines, left (first) to right;
    ``unknown`` for a hop that names none."""
    elements = _scan_forwarded(",".join(lines))
    return [element.get("for", "unknown") for element in elements]


def forwarded_chain(header: str, lines: Iterable[str]) -> list[str]:
    """The addresses one forwarding header names, client first, as written (not parsed)."""
    if header == "forwarded":
        return forwarded_for(lines)
    return [part.strip() for line in lines for part in line.split(",") if part.strip()]


__all__ = [
    "DEFAULT_PROXY_HEADER", "PROXY_HEADERS", "Address", "Network", "ProxyTrust",
    "forwarded_chain", "forwarded_for", "parse_address", "parse_network",
]
