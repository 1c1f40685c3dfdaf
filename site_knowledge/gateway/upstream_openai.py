"""The ``openai`` upstream kind: any server with a streaming ``/v1/chat/completions``
(Ollama, vLLM, LM Studio, llama-server itself).

What it cannot do, by design: pin a slot or keep a slot's prompt cache (``id_slot``,
``cache_prompt`` and priming are llama-server's), report cached tokens or decode speed
(llama-server's ``timings``; the metrics say unknown), or count a prompt exactly unless the
server answers ``/tokenize`` (vLLM's form with the messages, or llama-server's with the
text); otherwise the prompt is fitted by the artifact's character budgets. Only the standard
request fields are sent (``STANDARD_FIELDS``), so a strict server refuses nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx

from .config import Limits, UpstreamSpec
from .upstream_stream import json_field

STANDARD_FIELDS = frozenset({"messages", "max_tokens", "temperature", "stop",
                             "response_format"})
"""What of the gateway's request body an OpenAI-compatible server is sent."""
TOKENIZE_FORMS = ("messages", "content")
"""``/tokenize`` bodies tried in order: vLLM's counts the templated messages (its reply's
``count``), llama-server's the text alone (its reply's ``tokens``)."""
TEMPLATE_TOKENS_PER_MESSAGE = 8
"""Counted for each message's chat-template markers when ``/tokenize`` counts the text
alone, and once for the reply's opening (a ChatML turn takes five, its opening three)."""


def _root(url: str) -> tuple[str, str]:
    """The server's root and its OpenAI base (``…/v1``) from either."""
    url = url.rstrip("/")
    if urlsplit(url).path.endswith("/v1"):
        return url[:-len("/v1")], url
    return url, url + "/v1"


def _tokenized(form: str, response: httpx.Response, messages: int) -> int | None:
    """The prompt size a ``/tokenize`` reply gives in ``form``, or ``None``."""
    if form == "messages":
        count = json_field(response, "count")
        ok = isinstance(count, int) and not isinstance(count, bool) and count >= 0
        return count if ok else None
    tokens = json_field(response, "tokens")
    if not isinstance(tokens, list):
        return None
    return len(tokens) + TEMPLATE_TOKENS_PER_MESSAGE * (messages + 1)


class OpenAIUpstream:
    """One OpenAI-compatible server.

    Args:
        spec: where it is (``kind`` ``openai``), its model name and key.
        client: the pool's HTTP client.
        limits: the time bounds on what is read.
    """

    kind = "openai"
    reads_timings = False

    def __init__(self, spec: UpstreamSpec, client: httpx.AsyncClient, limits: Limits) -> None:
        self.spec = spec
        self.root, self.api = _root(spec.url)
        self.chat_url = self.api + "/chat/completions"
        self.client = client
        self.limits = limits
        self._tokenize: str | None = None
        """The ``TOKENIZE_FORMS`` entry that answered, once one did."""
        self._no_tokenize = False

    async def health(self, headers: dict[str, str]) -> dict[str, Any]:
        """``ok`` when ``GET /v1/models`` lists models."""
        try:
            response = await self.client.get(self.api + "/models", headers=headers,
                                             timeout=2.0)
        except httpx.HTTPError:
            return {"ok": False}
        return {"ok": isinstance(json_field(response, "data"), list)}

    async def admits(self, payload: dict[str, Any], headers: dict[str, str], index: int
                     ) -> bool:
        """Always: it has no slots to check; a refused connection moves on."""
        return True

    def body(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload's standard fields, the model name, streamed with usage."""
        standard = {k: v for k, v in payload.items() if k in STANDARD_FIELDS}
        named = {"model": self.spec.model} if self.spec.model else {}
        return {**standard, **named, "stream": True,
                "stream_options": {"include_usage": True}}

    async def count_tokens(self, messages: list[dict[str, str]], headers: dict[str, str]
                           ) -> int | None:
        """The prompt's size by ``/tokenize`` (``TOKENIZE_FORMS``, the one that answered
        first kept); ``None`` when the server counts neither way, and for good once both
        forms found no such endpoint."""
        if self._no_tokenize:
            return None
        forms = (self._tokenize,) if self._tokenize else TOKENIZE_FORMS
        missing = 0
        for form in forms:
            try:
                response = await self.client.post(
                    self.root + "/tokenize", json=self._tokenize_body(form, messages),
                    headers=headers, timeout=10.0)
            except httpx.HTTPError:
                return None
            if response.status_code in (404, 405):
                missing += 1
                continue
            count = _tokenized(form, response, len(messages))
            if count is not None:
                self._tokenize = form
                return count
        self._no_tokenize = missing == len(TOKENIZE_FORMS)
        return None

    def _tokenize_body(self, form: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        named = {"model": self.spec.model} if self.spec.model else {}
        if form == "messages":
            return {**named, "messages": messages, "add_generation_prompt": True}
        return {**named, "content": "".join(m["content"] for m in messages)}

    async def prime(self, slot: int, messages: list[dict[str, str]], headers: dict[str, str]
                    ) -> None:
        """Nothing: it has no slot whose cache the gateway could fill."""
