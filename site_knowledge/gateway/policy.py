"""Policy: the checks a request passes before the gateway does any work for it.

Each refusal is a ``Refusal`` with its own HTTP status and code; the app turns it into a
JSON error body. Nothing here logs or keeps a visitor's address beyond a rate window.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import math
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from .config import Limits

PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip", "cf-connecting-ip")


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


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def check_origin(origin: str | None, allowed: frozenset[str]) -> None:
    """A browser origin must be on the allow-list; requests without one are not browsers."""
    if origin is not None and origin not in allowed:
        raise Refusal(403, "origin_not_allowed", "This origin may not use the gateway.")


def check_token(
    headers: dict[str, str], client_host: str | None, token: str | None
) -> None:
    """Loopback clients without proxy headers pass; everyone else needs the bearer token."""
    proxied = any(h in headers for h in PROXY_HEADERS)
    if is_loopback(client_host) and not proxied:
        return
    supplied = headers.get("authorization", "")
    scheme, _, value = supplied.partition(" ")
    if (
        token is None
        or scheme.lower() != "bearer"
        or not hmac.compare_digest(value.strip().encode(), token.encode())
    ):
        raise Refusal(401, "unauthorized", "A valid bearer token is required.")


def parse_body(body: bytes, limits: Limits) -> AskRequest:
    """Validate the JSON body: ``{"question": str, "history": [{"question","answer"}]}``."""
    if len(body) > limits.body_bytes:
        raise Refusal(413, "body_too_large", f"The body exceeds {limits.body_bytes} bytes.")
    try:
        data: Any = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise Refusal(400, "invalid_json", "The body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise Refusal(422, "invalid_request", "The body must be a JSON object.")
    unknown = set(data) - {"question", "history"}
    if unknown:
        raise Refusal(422, "invalid_request", "Only question and history are accepted.")
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
        history.append(Exchange(item["question"], item["answer"]))
    return AskRequest(question.strip(), tuple(history))


class RateLimiter:
    """Sliding one-minute windows per visitor and for everyone together.

    Visitors are keyed by a salted hash of their address, kept only while in the window.
    """

    def __init__(self, per_visitor: int, overall: int, window_s: float = 60.0) -> None:
        self.per_visitor = per_visitor
        self.overall = overall
        self.window_s = window_s
        self._salt = hashlib.sha256(str(time.time_ns()).encode()).digest()
        self._visitors: dict[bytes, deque[float]] = {}
        self._all: deque[float] = deque()

    def _trim(self, times: deque[float], now: float) -> None:
        while times and times[0] <= now - self.window_s:
            times.popleft()

    def check(self, visitor: str) -> None:
        now = time.monotonic()
        key = hashlib.blake2b(visitor.encode(), key=self._salt, digest_size=16).digest()
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
        if len(self._all) >= self.overall:
            retry = math.ceil(self._all[0] + self.window_s - now)
            raise Refusal(
                503, "busy", "The gateway is at capacity; try again shortly.",
                {"Retry-After": str(max(retry, 1))},
            )
        mine.append(now)
        self._all.append(now)


def visitor_key(headers: dict[str, str], client_host: str | None) -> str:
    """The visitor's address: the proxy's client header when proxied, else the peer."""
    for name in ("cf-connecting-ip", "x-real-ip"):
        if name in headers:
            return headers[name].strip()
    if "x-forwarded-for" in headers:
        return headers["x-forwarded-for"].split(",")[0].strip()
    return client_host or "unknown"
