"""The upstream pool: the model servers behind one gateway, of any kind, tried in order.

Several upstreams are tried in order, but only while nothing has been generated: a refused
connection, a server that cannot take the request (a llama-server whose ``/props`` cannot
say how many slots it has, 503 while loading or an unreadable reply, or one without the
slot asked for) or a 503 or 429 from the chat endpoint moves on; anything after the response
began is an error for this request, never a retry elsewhere. What each kind can do is in its
module (``upstream_llama``, ``upstream_openai``); the stream they share is read by
``upstream_stream``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

import anyio
import httpx

from .config import Limits, UpstreamSpec, upstream_spec
from .upstream_llama import LlamaUpstream
from .upstream_openai import OpenAIUpstream
from .upstream_stream import (
    Delta,
    Finish,
    Started,
    UpstreamFailure,
    UpstreamUnavailable,
    translate,
)

log = logging.getLogger(__name__)

Member = LlamaUpstream | OpenAIUpstream
KINDS: dict[str, type[Member]] = {"llama": LlamaUpstream, "openai": OpenAIUpstream}
REFUSALS = frozenset({429, 503})
"""Chat replies that refuse before any generation: the next upstream is asked."""

Credentials = Callable[[], "dict[str, str] | None"]
"""What a supervised upstream needs sent with each request (its API key), or ``None`` while
its supervisor does not say it is ready: then nothing is sent to it at all."""


class Upstream:
    """The ordered pool of model servers behind one gateway.

    Args:
        upstreams: the servers (``UpstreamSpec``s or their text form), tried in order.
        limits: the byte and time bounds on what is read.
        client: the HTTP client to use instead of one of its own.
        credentials: for a supervised pool (``serve``), the headers of the process now ready,
            or ``None`` while there is none; without it each upstream is sent its own key.
    """

    def __init__(self, upstreams: Sequence[str | UpstreamSpec], limits: Limits,
                 client: httpx.AsyncClient | None = None,
                 credentials: Credentials | None = None) -> None:
        if not upstreams:
            raise ValueError("at least one upstream is required")
        self.limits = limits
        self.client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(limits.upstream_first_byte_s, connect=limits.upstream_connect_s)
        )
        self.credentials = credentials
        self.members: tuple[Member, ...] = tuple(
            KINDS[spec.kind](spec, self.client, limits)
            for spec in map(upstream_spec, upstreams))

    def headers(self, member: Member) -> dict[str, str] | None:
        """The headers to send ``member`` now, or ``None``: the supervised process is not
        ready."""
        return member.spec.headers if self.credentials is None else self.credentials()

    async def aclose(self) -> None:
        await self.client.aclose()

    async def health(self) -> list[dict[str, Any]]:
        """Each upstream's readiness (and a llama-server's slot count); no addresses or
        keys leave this object."""
        report = []
        for index, member in enumerate(self.members):
            headers = self.headers(member)
            state = {"ok": False} if headers is None else await member.health(headers)
            report.append({"index": index, **state})
        return report

    async def count_tokens(self, messages: list[dict[str, str]]) -> int | None:
        """The prompt size from the first upstream that can say, or ``None``."""
        for member in self.members:
            headers = self.headers(member)
            if headers is not None and (
                    count := await member.count_tokens(messages, headers)) is not None:
                return count
        return None

    async def prime(self, url_index: int, slot: int, messages: list[dict[str, str]]) -> None:
        """Evaluate ``messages`` into ``slot``'s prompt cache on upstream ``url_index``
        without generating (a kind without slots does nothing).

        Called at start with the system prompt, and after an answer with the exchange frozen,
        so a follow-up finds its whole history cached. Best effort: any failure only costs
        the cache. Reading a prompt can take as long as a first token.
        """
        member = self.members[url_index]
        headers = self.headers(member)
        if headers is None:
            raise httpx.HTTPError("the model server is not ready")
        await member.prime(slot, messages, headers)

    async def chat(
        self, payload: dict[str, Any]
    ) -> AsyncGenerator[Started | Delta | Finish, None]:
        """Stream one chat completion: ``Started``, then ``Delta``s, then one ``Finish``.

        ``payload`` is llama-server's body (``prompt.answer_payload``); each kind sends
        what of it it can.

        Raises ``UpstreamUnavailable`` when every upstream refused before generation and
        ``UpstreamFailure`` for anything after.
        """
        failovers = 0
        for index, member in enumerate(self.members):
            headers = self.headers(member)
            if headers is None or not await member.admits(payload, headers, index):
                failovers += 1
                continue
            try:
                request = self.client.build_request(
                    "POST", member.chat_url, json=member.body(payload), headers=headers)
                response = await self.client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                failovers += 1
                continue
            except httpx.HTTPError as exc:
                raise UpstreamFailure(
                    "upstream_error", "The model server did not answer."
                ) from exc
            try:
                if response.status_code in REFUSALS:
                    failovers += 1
                    continue
                if response.status_code != 200:
                    log.warning("upstream %d refused the request (%d)", index,
                                response.status_code)
                    raise UpstreamFailure(
                        "upstream_error", f"The model server refused ({response.status_code})."
                    )
                yield Started(index, failovers)
                async for item in translate(response, self.limits.upstream_bytes,
                                            timings=member.reads_timings):
                    yield item
                return
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
        raise UpstreamUnavailable


__all__ = [
    "KINDS",
    "Credentials",
    "Delta",
    "Finish",
    "Started",
    "Upstream",
    "UpstreamFailure",
    "UpstreamUnavailable",
]
