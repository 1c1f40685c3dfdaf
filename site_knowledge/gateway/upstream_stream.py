"""What every upstream kind shares: the events a chat stream becomes, the two ways it can
fail, and the strict reader of an OpenAI-compatible streaming reply (``data:`` lines of JSON
chunks, then ``data: [DONE]``). Every reply is read as if it could have any shape.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

FINISH_REASONS = frozenset({"stop", "length"})


class UpstreamUnavailable(Exception):
    """No upstream accepted the request before generation."""


class UpstreamFailure(Exception):
    """The upstream failed; ``code`` is safe to show, the detail stays here."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Delta:
    text: str


@dataclass(frozen=True)
class Finish:
    """How the answer ended. ``timings`` are llama-server's own (``cache_n``, decode speed):
    empty from a kind that cannot say. ``usage`` is the OpenAI usage object, as sent."""

    reason: str
    timings: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class Started:
    """The upstream accepted the request (headers received): generation has begun."""

    url_index: int
    failovers: int


def json_field(response: httpx.Response, name: str) -> Any:
    """``name`` from a 200 reply's JSON object; ``None`` for any other status or shape (a
    reply nested too deep for the decoder included)."""
    if response.status_code != 200:
        return None
    try:
        data = response.json()
    except (ValueError, RecursionError):
        return None
    return data.get(name) if isinstance(data, dict) else None


def _malformed() -> UpstreamFailure:
    return UpstreamFailure("upstream_malformed", "The model server sent an unreadable event.")


def _incomplete() -> UpstreamFailure:
    return UpstreamFailure("upstream_incomplete", "The answer ended without finishing.")


def _reported() -> UpstreamFailure:
    return UpstreamFailure("upstream_error", "The model server reported an error.")


def _lines(data: bytes) -> tuple[list[bytes], bytes]:
    """The complete lines in ``data`` (without line ends) and the unfinished rest."""
    *lines, rest = data.split(b"\n")
    return [line.rstrip(b"\r") for line in lines], rest


class _Chunks:
    """The state of one stream: the finish reason once given, the last timings and usage."""

    def __init__(self, timings: bool) -> None:
        self.read_timings = timings
        self.reason: str | None = None
        self.timings: dict[str, Any] = {}
        self.usage: dict[str, Any] = {}

    def finish(self) -> Finish:
        if self.reason is None:
            raise _incomplete()
        return Finish(self.reason, self.timings, self.usage)

    def deltas(self, data: bytes) -> list[str]:
        """The text of one ``data:`` chunk; its finish reason, timings and usage noted."""
        try:
            obj = json.loads(data)
        except (ValueError, RecursionError):
            raise _malformed() from None
        if not isinstance(obj, dict):
            raise _malformed()
        if "error" in obj:
            raise _reported()
        if self.read_timings and isinstance(obj.get("timings"), dict):
            self.timings = obj["timings"]
        if isinstance(obj.get("usage"), dict):
            self.usage = obj["usage"]
        choices = obj.get("choices")
        if not isinstance(choices, list):
            raise _malformed()
        texts = []
        for choice in choices:
            delta = choice.get("delta", {}) if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                raise _malformed()
            content = delta.get("content")
            if content is not None and not isinstance(content, str):
                raise _malformed()
            if content:
                if self.reason is not None:
                    raise _malformed()
                texts.append(content)
            finish = choice.get("finish_reason")
            if finish is not None:
                if finish not in FINISH_REASONS:
                    raise UpstreamFailure("upstream_finish_unknown",
                                          "The model stopped for an unknown reason.")
                self.reason = finish
        return texts


async def translate(response: httpx.Response, max_bytes: int, *, timings: bool
                    ) -> AsyncIterator[Delta | Finish]:
    """``Delta``s, then one ``Finish``, from a streaming chat reply.

    Args:
        response: the open reply (status 200).
        max_bytes: the most the reply may send (``upstream_oversized`` beyond).
        timings: keep llama-server's ``timings`` objects (a kind that cannot vouch for
            them reads none).

    Raises:
        UpstreamFailure: a line that is not SSE, an unreadable chunk, an ``error`` event or
            line, an unknown finish reason, text after the finish, ``[DONE]`` or the end
            without a finish, too many bytes, or the connection lost mid-answer.
    """
    chunks = _Chunks(timings)
    total = 0
    buffer = b""
    try:
        async for data in response.aiter_bytes():
            total += len(data)
            if total > max_bytes:
                raise UpstreamFailure("upstream_oversized", "The model server sent too much.")
            lines, buffer = _lines(buffer + data)
            for line in lines:
                if not line or line.startswith(b":"):
                    continue
                if line.startswith(b"error:"):
                    raise _reported()
                if not line.startswith(b"data:"):
                    raise _malformed()
                payload = line[5:].strip()
                if payload == b"[DONE]":
                    yield chunks.finish()
                    return
                for text in chunks.deltas(payload):
                    yield Delta(text)
    except httpx.HTTPError as exc:
        raise UpstreamFailure(
            "upstream_interrupted", "The model server stopped mid-answer."
        ) from exc
    yield chunks.finish()
