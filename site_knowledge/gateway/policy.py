"""Policy: the checks a request passes before the gateway does any work for it.

Two modes. *Public* (no token): anyone may ask, within the origin allow-list, the body caps
and the per-visitor and global rate limits, so a static site's visitors need no secret.
*Private* (a token): every client presents it, loopback included, since a forwarder that adds
no header (``ssh -R``, socat) makes every visitor look like a loopback client.

Each refusal is a ``Refusal`` with its own HTTP status and code; the app turns it into a
JSON error body. Nothing here logs or keeps a visitor's address beyond a rate window.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import json
import logging
import math
import re
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .config import Limits
from .forwarding import PROXY_HEADERS, Address, ProxyTrust, forwarded_chain, parse_address

log = logging.getLogger(__name__)


class Refusal(Exception):
    """A request refused by policy: ``status``, a stable ``code`` and a short message."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(code)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


@dataclass(frozen=True)
class Exchange:
    question: str
    answer: str


@dataclass(frozen=True)
class AskRequest:
    question: str
    history: tuple[Exchange, ...]
    lang: str | None = None
    """The language of the page it was asked on (``<html lang>``), when the client sends it."""


def check_origin(origin: str | None, allowed: frozenset[str]) -> None:
    """A browser origin must be on the allow-list; requests without one are not browsers."""
    if origin is not None and origin not in allowed:
        raise Refusal(403, "origin_not_allowed", "This origin may not use the gateway.")


def check_token(headers: dict[str, str], token: str | None) -> None:
    """Private mode (a token set): every client presents ``Authorization: Bearer TOKEN``,
    wherever it connects from. Public mode (``None``): nothing to check."""
    if token is None:
        return
    supplied = headers.get("authorization", "")
    scheme, _, value = supplied.partition(" ")
    value = value.strip()
    # Digests of equal length, compared in constant time: neither the token's length nor
    # its prefix shows in the timing; an empty token (never configured) matches nothing.
    matches = hmac.compare_digest(hashlib.sha256(value.encode("utf-8", "replace")).digest(),
                                  hashlib.sha256(token.encode()).digest())
    if scheme.lower() != "bearer" or not value or not token or not matches:
        raise Refusal(401, "unauthorized", "A valid bearer token is required.")


MAX_DEPTH = 3
"""The deepest nesting a valid body has: ``{"history": [{"question": ...}]}``."""
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(rb"[\[\]{}]")
LANG_TAG = re.compile(r"(?=.{2,35}$)[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*", re.ASCII)
"""A BCP 47 language tag as ``<html lang>`` writes it (``en``, ``pt-BR``, ``zh-Hant``)."""
_BAD_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|(?P<surrogate>[\ud800-\udfff])")
_NUMBER_CHARS = 32


def _bad_json(reason: str) -> Refusal:
    return Refusal(400, "invalid_json", f"The body is not valid JSON: {reason}.")


def _nesting(body: bytes) -> int:
    """The deepest bracket nesting outside strings, counted without recursion."""
    depth = deepest = 0
    for bracket in _BRACKET.finditer(_JSON_STRING.sub(b'""', body)):
        depth += 1 if bracket.group() in (b"[", b"{") else -1
        deepest = max(deepest, depth)
    return deepest


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _bad_json("a key appears twice")
    return dict(pairs)


def _number(text: str) -> float:
    if len(text) > _NUMBER_CHARS:
        raise _bad_json("a number is too long")
    value = float(text)
    if not math.isfinite(value):
        raise _bad_json("a number is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise _bad_json(f"{name} is not a JSON number")


def _decode(body: bytes) -> Any:
    """Strict JSON: UTF-8 only, at most ``MAX_DEPTH`` deep, no duplicate keys, short finite
    numbers; each violation is a ``Refusal`` that names it (never a ``RecursionError``)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad_json("it is not UTF-8") from None
    if _nesting(body) > MAX_DEPTH:
        raise _bad_json(f"it nests deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_int=_number,
                          parse_float=_number, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise Refusal(400, "invalid_json", "The body is not valid JSON.") from None


def _text(name: str, value: str) -> str:
    """``value`` when it holds no control character or lone surrogate, else a refusal."""
    bad = _BAD_TEXT.search(value)
    if bad is not None:
        what = "a lone surrogate" if bad.group("surrogate") else "a control character"
        raise Refusal(422, "invalid_text", f"{name} contains {what}.")
    return value


def parse_body(body: bytes, limits: Limits) -> AskRequest:
    """Validate the JSON body: ``{"question": str, "history": [{"question","answer"}],
    "lang"?: str}``.

    Every malformed body is a ``Refusal`` (4xx) with its reason: too large, not UTF-8, too
    deep, duplicate keys, long or non-finite numbers, wrong types, control characters or lone
    surrogates in the text (which no tokenizer downstream accepts).
    """
    if len(body) > limits.body_bytes:
        raise Refusal(413, "body_too_large", f"The body exceeds {limits.body_bytes} bytes.")
    data: Any = _decode(body)
    if not isinstance(data, dict):
        raise Refusal(422, "invalid_request", "The body must be a JSON object.")
    unknown = set(data) - {"question", "history", "lang"}
    if unknown:
        raise Refusal(422, "invalid_request", "Only question, history and lang are accepted.")
    lang = data.get("lang")
    if lang is not None and not (isinstance(lang, str) and LANG_TAG.fullmatch(lang)):
        raise Refusal(422, "invalid_request",
                      "lang must be a language tag such as 'en' or 'zh-Hant' (at most 35 characters).")
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise Refusal(422, "invalid_request", "question must be a non-empty string.")
    if len(question) > limits.question_chars:
        raise Refusal(
            422, "question_too_long", f"question exceeds {limits.question_chars} characters."
        )
    raw_history = data.get("history", [])
    if not isinstance(raw_history, list):
        raise Refusal(422, "invalid_request", "history must be a list.")
    if len(raw_history) > limits.history_exchanges:
        raise Refusal(
            422,
            "history_too_long",
            f"history holds at most {limits.history_exchanges} exchanges.",
        )
    history: list[Exchange] = []
    for item in raw_history:
        if (
            not isinstance(item, dict)
            or set(item) != {"question", "answer"}
            or not isinstance(item["question"], str)
            or not isinstance(item["answer"], str)
        ):
            raise Refusal(
                422, "invalid_request", "Each history item is {question, answer} strings."
            )
        if (
            len(item["question"]) > limits.question_chars
            or len(item["answer"]) > limits.history_answer_chars
        ):
            raise Refusal(422, "history_too_long", "A history item is too long.")
        history.append(Exchange(_text("A history question", item["question"]),
                                _text("A history answer", item["answer"])))
    return AskRequest(_text("question", question).strip(), tuple(history), lang)


class RateLimiter:
    """Sliding one-minute windows per visitor, per IPv6 /48, and for everyone together.

    Visitors are keyed by a salted hash of their address, kept only while in the window. An
    IPv6 visitor is a /64 (``visitor_key``); the /48 around it (``network_key``: a site's
    allocation, which holds 65,536 /64s) has an aggregate window of ``per_network``, so one
    network cannot take the overall limit by walking through its /64s.
    """

    def __init__(self, per_visitor: int, overall: int, window_s: float = 60.0,
                 per_network: int | None = None) -> None:
        self.per_visitor = per_visitor
        self.overall = overall
        self.per_network = per_network
        self.window_s = window_s
        self._salt = hashlib.sha256(str(time.time_ns()).encode()).digest()
        self._visitors: dict[bytes, deque[float]] = {}
        self._all: deque[float] = deque()

    def _trim(self, times: deque[float], now: float) -> None:
        while times and times[0] <= now - self.window_s:
            times.popleft()

    def key(self, visitor: str) -> bytes:
        """The salted hash the gateway keeps instead of ``visitor``."""
        return hashlib.blake2b(visitor.encode(), key=self._salt, digest_size=16).digest()

    def check(self, visitor: str) -> None:
        now = time.monotonic()
        key = self.key(visitor)
        self._trim(self._all, now)
        for stale in [k for k, v in self._visitors.items() if not v or v[-1] <= now - self.window_s]:
            del self._visitors[stale]
        mine = self._visitors.setdefault(key, deque())
        self._trim(mine, now)
        if len(mine) >= self.per_visitor:
            retry = math.ceil(mine[0] + self.window_s - now)
            raise Refusal(
                429, "rate_limited", "Too many questions; try again shortly.",
                {"Retry-After": str(max(retry, 1))},
            )
        network = network_key(visitor)
        ours: deque[float] | None = None
        if network is not None and self.per_network is not None:
            ours = self._visitors.setdefault(self.key("network " + network), deque())
            self._trim(ours, now)
            if len(ours) >= self.per_network:
                retry = math.ceil(ours[0] + self.window_s - now)
                raise Refusal(
                    429, "network_rate_limited",
                    "Too many questions from your network; try again shortly.",
                    {"Retry-After": str(max(retry, 1))},
                )
        if len(self._all) >= self.overall:
            retry = math.ceil(self._all[0] + self.window_s - now)
            raise Refusal(
                503, "busy", "The gateway is at capacity; try again shortly.",
                {"Retry-After": str(max(retry, 1))},
            )
        mine.append(now)
        if ours is not None:
            ours.append(now)
        self._all.append(now)


def network_key(visitor: str) -> str | None:
    """The IPv6 /48 around a /64 visitor key, or ``None`` (IPv4, or not an address)."""
    try:
        network = ipaddress.ip_network(visitor)
    except ValueError:
        return None
    if network.version != 6 or network.prefixlen < 48:
        return None
    return str(network.supernet(new_prefix=48))


def _address_key(address: Address) -> str:
    """IPv4 per address; IPv6 per /64, the block one subscriber line gets, so a visitor cannot
    dodge the limit by walking through the addresses of their own network."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


@functools.cache
def _warn_once(message: str) -> None:
    log.warning(message)


def visitor_key(
    header_lines: Iterable[tuple[str, str]], peer: str | None, trust: ProxyTrust
) -> str:
    """Who is asking, for the rate limits: the TCP peer, unless the peer is a trusted proxy;
    then the right-most untrusted address in ``trust.header`` (the left-most when every hop is
    trusted, the proxy itself when it sent no header). The key is never logged."""
    peer_address = parse_address(peer or "")
    if peer_address is None:
        return peer or "unknown"
    lines = [(name.lower(), value) for name, value in header_lines]
    if not trust.trusts(peer_address):
        if peer_address.is_loopback and any(name in PROXY_HEADERS for name, _ in lines):
            _warn_once("a loopback peer sends forwarding headers but is not a --trusted-proxy: "
                       "they are ignored, and all the visitors it forwards share one rate limit")
        return _address_key(peer_address)
    chain = forwarded_chain(trust.header, [v for name, v in lines if name == trust.header])
    for node in reversed(chain):
        address = parse_address(node)
        if address is None:
            return "node:" + node.strip()[:64]
        if not trust.trusts(address):
            return _address_key(address)
    if not chain:
        _warn_once(f"a trusted proxy sent no {trust.header} header: all the visitors it "
                   "forwards share one rate limit")
        return _address_key(peer_address)
    return _address_key(parse_address(chain[0]) or peer_address)
