"""The ``llama`` upstream kind: llama-server's own endpoints around its OpenAI-compatible
chat. Slots are read from ``/props`` (a request for a slot it lacks goes elsewhere), prompts
are counted exactly (``/v1/chat/completions/input_tokens``), a slot's cache is primed
(``/apply-template``, then ``/completion`` with ``n_predict: 0``), and its ``timings``
(cached tokens, decode speed) are believed.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from .config import Limits, UpstreamSpec
from .upstream_stream import json_field

log = logging.getLogger(__name__)


class LlamaUpstream:
    """One llama-server.

    Args:
        spec: where it is (``kind`` ``llama``).
        client: the pool's HTTP client.
        limits: the time bounds on what is read.
    """

    kind = "llama"
    reads_timings = True

    def __init__(self, spec: UpstreamSpec, client: httpx.AsyncClient, limits: Limits) -> None:
        self.spec = spec
        self.url = spec.url.rstrip("/")
        self.chat_url = self.url + "/v1/chat/completions"
        self.client = client
        self.limits = limits
        self._slots: int | None = None

    async def health(self, headers: dict[str, str]) -> dict[str, Any]:
        """``ok`` from ``/health``, and the slot count once ``/props`` says it."""
        try:
            response = await self.client.get(self.url + "/health", timeout=2.0)
        except httpx.HTTPError:
            return {"ok": False}
        if response.status_code != 200:
            return {"ok": False}
        slots = await self.slots(headers)
        return {"ok": True} if slots is None else {"ok": True, "slots": slots}

    async def slots(self, headers: dict[str, str]) -> int | None:
        """The slot count from ``/props`` (kept once read); ``None`` while it cannot say
        (loading answers 503; unreachable; an unreadable reply)."""
        if self._slots is None:
            try:
                response = await self.client.get(self.url + "/props", headers=headers,
                                                 timeout=5.0)
            except httpx.HTTPError:
                return None
            total = json_field(response, "total_slots")
            if not isinstance(total, int) or isinstance(total, bool) or total < 1:
                return None
            self._slots = total
        return self._slots

    async def admits(self, payload: dict[str, Any], headers: dict[str, str], index: int
                     ) -> bool:
        """Whether to send it ``payload``: it says its slots, and has the one asked for."""
        slots = await self.slots(headers)
        slot = payload.get("id_slot")
        if slots is None:
            return False
        if isinstance(slot, int) and not 0 <= slot < slots:
            log.warning("upstream %d has no slot %d; skipping it", index, slot)
            return False
        return True

    def body(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The chat request as llama-server takes it: the payload as built, streamed."""
        named = {"model": self.spec.model} if self.spec.model else {}
        return {**payload, **named, "stream": True}

    async def count_tokens(self, messages: list[dict[str, str]], headers: dict[str, str]
                           ) -> int | None:
        """The exact templated prompt size, or ``None`` when it cannot say."""
        try:
            response = await self.client.post(
                self.chat_url + "/input_tokens", json={"messages": messages},
                headers=headers, timeout=10.0,
            )
        except httpx.HTTPError:
            return None
        count = json_field(response, "input_tokens")
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            return count
        return None

    async def prime(self, slot: int, messages: list[dict[str, str]], headers: dict[str, str]
                    ) -> None:
        """Evaluate ``messages`` into ``slot``'s prompt cache without generating.

        Raises:
            httpx.HTTPError: it did not take them (best effort: that only costs the cache).
        """
        templated = await self.client.post(self.url + "/apply-template", json={
            "messages": messages, "chat_template_kwargs": {"enable_thinking": False},
        }, headers=headers, timeout=10.0)
        text = json_field(templated, "prompt")
        if not isinstance(text, str):
            raise httpx.HTTPError("apply-template without prompt")
        response = await self.client.post(self.url + "/completion", json={
            "prompt": text, "n_predict": 0, "id_slot": slot, "cache_prompt": True,
        }, headers=headers, timeout=self.limits.upstream_first_byte_s)
        response.raise_for_status()
