"""llama-server as the upstream: its OpenAI-compatible streaming chat endpoint, read
strictly and translated into deltas and one finish.

Several upstreams are tried in order, but only while nothing has been generated: a refused
connection, a ``/props`` that cannot say how many slots there are (503 while loading, or an
unreadable reply) or a 503 from the chat endpoint moves on; anything after the response
began is an error for this request, never a retry elsewhere. Every reply is read as if it
could have any shape.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from .config import Limits

log = logging.getLogger(__name__)

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
    reason: str
    timings: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class Started:
    """The upstream accepted the request (headers received): generation has begun."""

    url_index: int
    failovers: int


def _field(response: httpx.Response, name: str) -> Any:
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


Credentials = Callable[[], "dict[str, str] | None"]
"""What a supervised upstream needs sent with each request (its API key), or ``None`` while
its supervisor does not say it is ready: then nothing is sent to it at all."""


class Upstream:
    """The ordered llama-server pool behind one gateway.

    Args:
        urls: llama-server base URLs, tried in order.
        limits: the byte and time bounds on what is read.
        client: the HTTP client to use instead of one of its own.
        credentials: for a supervised pool (``serve``), the headers of the process now ready,
            or ``None`` while there is none; a pool without it is always sent to, bare.
    """

    def __init__(self, urls: tuple[str, ...], limits: Limits,
                 client: httpx.AsyncClient | None = None,
                 credentials: Credentials | None = None) -> None:
        if not urls:
            raise ValueError("at least one upstream is required")
        self.urls = tuple(u.rstrip("/") for u in urls)
        self.limits = limits
        self.client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(limits.upstream_first_byte_s, connect=limits.upstream_connect_s)
        )
        self.credentials = credentials
        self._slots: dict[str, int] = {}

    def headers(self) -> dict[str, str] | None:
        """The headers to send now, or ``None``: the supervised process is not ready."""
        return {} if self.credentials is None else self.credentials()

    async def aclose(self) -> None:
        await self.client.aclose()

    async def health(self) -> list[dict[str, Any]]:
        """Each upstream's readiness and slot count; no addresses leave this object."""
        report = []
        for index, url in enumerate(self.urls):
            entry: dict[str, Any] = {"index": index, "ok": False}
            if self.headers() is None:
                report.append(entry)
                continue
            try:
                response = await self.client.get(url + "/health", timeout=2.0)
                entry["ok"] = response.status_code == 200
            except httpx.HTTPError:
                pass
            if entry["ok"] and (slots := await self.slots(url)) is not None:
                entry["slots"] = slots
            report.append(entry)
        return report

    async def slots(self, url: str) -> int | None:
        """The upstream's slot count from ``/props`` (cached once read); ``None`` while it
        cannot say (loading answers 503; unreachable; an unreadable reply)."""
        headers = self.headers()
        if headers is None:
            return None
        if url not in self._slots:
            try:
                response = await self.client.get(url + "/props", headers=headers, timeout=5.0)
            except httpx.HTTPError:
                return None
            total = _field(response, "total_slots")
            if not isinstance(total, int) or isinstance(total, bool) or total < 1:
                return None
            self._slots[url] = total
        return self._slots[url]

    async def count_tokens(self, messages: list[dict[str, str]]) -> int | None:
        """The exact templated prompt size, or ``None`` when no upstream can say."""
        for url in self.urls:
            headers = self.headers()
            if headers is None:
                continue
            try:
                response = await self.client.post(
                    url + "/v1/chat/completions/input_tokens",
                    json={"messages": messages}, headers=headers, timeout=10.0,
                )
            except httpx.HTTPError:
                continue
            count = _field(response, "input_tokens")
            if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
                return count
        return None

    async def prime(self, url_index: int, slot: int, messages: list[dict[str, str]]) -> None:
        """Evaluate ``messages`` into ``slot``'s prompt cache without generating.

        Called at start with the system prompt, and after an answer with the exchange frozen,
        so a follow-up finds its whole history cached. Best effort: any failure only costs
        the cache. Reading a prompt can take as long as a first token.
        """
        url = self.urls[url_index]
        headers = self.headers()
        if headers is None:
            raise httpx.HTTPError("the model server is not ready")
        templated = await self.client.post(url + "/apply-template", json={
            "messages": messages, "chat_template_kwargs": {"enable_thinking": False},
        }, headers=headers, timeout=10.0)
        text = _field(templated, "prompt")
        if not isinstance(text, str):
            raise httpx.HTTPError("apply-template without prompt")
        response = await self.client.post(url + "/completion", json={
            "prompt": text, "n_predict": 0, "id_slot": slot, "cache_prompt": True,
        }, headers=headers, timeout=self.limits.upstream_first_byte_s)
        response.raise_for_status()

    async def chat(
        self, payload: dict[str, Any]
    ) -> AsyncGenerator[Started | Delta | Finish, None]:
        """Stream one chat completion: ``Started``, then ``Delta``s, then one ``Finish``.

        Raises ``UpstreamUnavailable`` when every upstream refused before generation and
        ``UpstreamFailure`` for anything after.
        """
        slot = payload.get("id_slot")
        failovers = 0
        for index, url in enumerate(self.urls):
            slots = await self.slots(url)
            headers = self.headers()
            if headers is None or slots is None or (
                    isinstance(slot, int) and not 0 <= slot < slots):
                if slots is not None:
                    log.warning("upstream %d has no slot %d; skipping it", index, slot)
                failovers += 1
                continue
            try:
                request = self.client.build_request(
                    "POST", url + "/v1/chat/completions", json={**payload, "stream": True},
                    headers=headers,
                )
                response = await self.client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                failovers += 1
                continue
            except httpx.HTTPError as exc:
                raise UpstreamFailure(
                    "upstream_error", "The model server did not answer."
                ) from exc
            try:
                if response.status_code == 503:
                    failovers += 1
                    continue
                if response.status_code != 200:
                    raise UpstreamFailure(
                        "upstream_error", f"The model server refused ({response.status_code})."
                    )
                yield Started(index, failovers)
                async for item in self._translate(response):
                    yield item
                return
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
        raise UpstreamUnavailable

    async def _translate(self, response: httpx.Response) -> AsyncIterator[Delta | Finish]:
        reason: str | None = None
        timings: dict[str, Any] = {}
        usage: dict[str, Any] = {}
        total = 0
        buffer = b""
        try:
            async for chunk in response.aiter_bytes():
                total += len(chunk)
                if total > self.limits.upstream_bytes:
                    raise UpstreamFailure(
                        "upstream_oversized", "The model server sent too much."
                    )
                buffer += chunk
                while b"\n" in buffer:
                    raw, buffer = buffer.split(b"\n", 1)
                    line = raw.rstrip(b"\r")
                    if not line or line.startswith(b":"):
                        continue
                    if not line.startswith(b"data:"):
                        if line.startswith(b"error:"):
                            raise UpstreamFailure(
                                "upstream_error", "The model server reported an error."
                            )
                        raise _malformed()
                    data = line[5:].strip()
                    if data == b"[DONE]":
                        if reason is None:
                            raise UpstreamFailure(
                                "upstream_incomplete", "The answer ended without finishing."
                            )
                        yield Finish(reason, timings, usage)
                        return
                    try:
                        obj = json.loads(data)
                    except ValueError:
                        raise _malformed() from None
                    if not isinstance(obj, dict):
                        raise _malformed()
                    if "error" in obj:
                        raise UpstreamFailure(
                            "upstream_error", "The model server reported an error."
                        )
                    if isinstance(obj.get("timings"), dict):
                        timings = obj["timings"]
                    if isinstance(obj.get("usage"), dict):
                        usage = obj["usage"]
                    choices = obj.get("choices")
                    if not isinstance(choices, list):
                        raise _malformed()
                    for choice in choices:
                        if not isinstance(choice, dict):
                            raise _malformed()
                        delta = choice.get("delta", {})
                        if not isinstance(delta, dict):
                            raise _malformed()
                        content = delta.get("content")
                        if content is not None and not isinstance(content, str):
                            raise _malformed()
                        if content:
                            if reason is not None:
                                raise _malformed()
                            yield Delta(content)
                        finish = choice.get("finish_reason")
                        if finish is not None:
                            if finish not in FINISH_REASONS:
                                raise UpstreamFailure(
                                    "upstream_finish_unknown",
                                    "The model stopped for an unknown reason.",
                                )
                            reason = finish
        except httpx.HTTPError as exc:
            raise UpstreamFailure(
                "upstream_interrupted", "The model server stopped mid-answer."
            ) from exc
        if reason is None:
            raise UpstreamFailure("upstream_incomplete", "The answer ended without finishing.")
        yield Finish(reason, timings, usage)
