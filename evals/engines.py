"""Engines the battery runs against. Each turns one item (question + history) into an Answer.

- ``GatewayEngine``: the gateway's ``POST /api/ask`` server-sent events.
- ``LlamaEngine``: the same prompt, assembled from the artifact by the gateway's own prompt
  code, sent straight to llama-server's ``/v1/chat/completions`` (separates the model's effect
  from the gateway's).
- ``BrowserEngine``: headless Chromium on the built site, through ``window.siteKnowledge.ask``.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evals.dataset import Item
from evals.scorer import Answer, Citation

if TYPE_CHECKING:
    import httpx


class Engine(Protocol):
    """Something that answers battery items."""

    name: str

    def info(self) -> dict[str, Any]:
        """Model and configuration identity, for the report."""
        ...

    def ask(self, item: Item) -> Answer:
        """Answer one item (its history is the previous exchanges)."""
        ...


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """Decode ``data:`` events (JSON) from server-sent-event lines; comments are skipped."""
    data: list[str] = []
    for line in lines:
        if line.startswith(":"):
            continue
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
            continue
        if not line.strip() and data:
            payload = "\n".join(data)
            data = []
            if payload == "[DONE]":
                return
            yield json.loads(payload)
    if data:
        yield json.loads("\n".join(data))


def _history(item: Item) -> list[dict[str, str]]:
    return [{"question": t.question, "answer": t.answer} for t in item.history]


class GatewayEngine:
    """The gateway over HTTP, as a visitor's browser would use it."""

    name = "gateway"

    def __init__(
        self,
        url: str,
        token: str | None = None,
        timeout: float = 180.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx

        self.url = url.rstrip("/")
        headers = {"Accept": "text/event-stream"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.client = httpx.Client(headers=headers, timeout=timeout, transport=transport)

    def info(self) -> dict[str, Any]:
        """The gateway's ``/healthz`` (model name and hash when it reports them)."""
        try:
            response = self.client.get(f"{self.url}/healthz")
            health: dict[str, Any] = response.json()
        except Exception as exc:
            health = {"error": repr(exc)}
        return {"url": self.url, "healthz": health}

    MAX_RETRIES = 20

    def ask(self, item: Item) -> Answer:
        """One answer; a 429 (rate limit, full queue) is waited out as ``Retry-After`` says,
        since it says nothing about the model, and the wait is not counted as latency."""
        for _ in range(self.MAX_RETRIES):
            answer, retry_after = self._ask_once(item)
            if retry_after is None:
                return answer
            self.waited_s += retry_after
            time.sleep(retry_after)
        return answer

    waited_s = 0.0

    def _ask_once(self, item: Item) -> tuple[Answer, float | None]:
        """Stream one answer; EOF without a terminal event is an error."""
        body = {"question": item.question, "history": _history(item)}
        started = time.perf_counter()
        first: float | None = None
        text: list[str] = []
        sources: list[dict[str, Any]] = []
        answer = Answer("")
        try:
            with self.client.stream("POST", f"{self.url}/api/ask", json=body) as response:
                if response.status_code == 429:
                    response.read()
                    return answer, float(response.headers.get("retry-after") or 5)
                if response.status_code != 200:
                    response.read()
                    answer.error = f"HTTP {response.status_code}: {response.text[:200]}"
                    return answer, None
                terminal = False
                for event in sse_events(response.iter_lines()):
                    if "sources" in event:
                        sources = list(event["sources"])
                    elif "delta" in event:
                        if first is None:
                            first = (time.perf_counter() - started) * 1000
                        text.append(str(event["delta"]))
                    elif event.get("done"):
                        terminal = True
                        answer.finish_reason = str(event.get("finish_reason", ""))
                        answer.citations = [
                            Citation(int(c["n"]), str(c["url"]), str(c.get("title", "")))
                            for c in event.get("citations", [])
                        ]
                        break
                    elif "error" in event:
                        terminal = True
                        err = event["error"]
                        answer.error = f"{err.get('code')}: {err.get('message')}"
                        break
                if not terminal:
                    answer.error = "stream ended without a terminal event"
        except Exception as exc:
            answer.error = f"{type(exc).__name__}: {exc}"
        answer.text = "".join(text)
        answer.refused = answer.finish_reason == "refused"
        answer.latency_ms = (time.perf_counter() - started) * 1000
        answer.first_token_ms = first
        if not answer.citations and sources:
            answer.citations = _cited_sources(answer.text, sources)
        return answer, None


def _cited_sources(text: str, sources: list[dict[str, Any]]) -> list[Citation]:
    import re

    marked = {int(n) for n in re.findall(r"\[(\d{1,3})\]", text)}
    return [
        Citation(int(s["n"]), str(s.get("url", "")), str(s.get("title", "")))
        for s in sources
        if "n" in s and int(s["n"]) in marked
    ]


class LlamaEngine:
    """llama-server directly, with the prompt the gateway would assemble for the same item.

    Retrieval, the gate and prompt assembly are the gateway's own functions
    (``site_knowledge.retrieval``, ``site_knowledge.gateway.prompt``); only the HTTP layer,
    admission and streaming are left out, so gateway minus llama isolates their effect.
    """

    name = "llama"
    TOP_K = 4
    SLOT = 1

    def __init__(
        self,
        url: str,
        artifact: Path,
        timeout: float = 180.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx

        from site_knowledge.retrieval import load_index

        self.url = url.rstrip("/")
        self.index = load_index(artifact)
        self.client = httpx.Client(timeout=timeout, transport=transport)

    def info(self) -> dict[str, Any]:
        """llama-server's ``/props`` (model path) when available."""
        try:
            props: dict[str, Any] = self.client.get(f"{self.url}/props").json()
        except Exception as exc:
            return {"url": self.url, "error": repr(exc)}
        settings = props.get("default_generation_settings") or {}
        return {
            "url": self.url,
            "model_path": props.get("model_path") or settings.get("model"),
            "n_ctx": settings.get("n_ctx"),
            "top_k_passages": self.TOP_K,
            "id_slot": self.SLOT,
        }

    def _count_tokens(self, messages: list[dict[str, str]]) -> int | None:
        try:
            response = self.client.post(
                f"{self.url}/v1/chat/completions/input_tokens", json={"messages": messages}
            )
            count = response.json().get("input_tokens") if response.status_code == 200 else None
        except Exception:
            return None
        return count if isinstance(count, int) else None

    def ask(self, item: Item) -> Answer:
        """Retrieve, gate, assemble with the gateway's prompt code, and generate."""
        import asyncio

        from site_knowledge.gateway import prompt as gateway_prompt

        started = time.perf_counter()
        artifact = self.index.artifact
        history = [t.question for t in item.history]
        result = self.index.search(item.question, history=history, mode="hybrid", top_k=self.TOP_K)
        if not result.answerable:
            return Answer(
                str(artifact["prompt"]["refusal"]),
                refused=True,
                finish_reason="refused",
                latency_ms=(time.perf_counter() - started) * 1000,
            )
        budgets = gateway_prompt.Budgets.from_artifact(artifact)
        hits: list[Any] = list(result.hits)  # frozen records satisfy the protocol at run time
        evidence = gateway_prompt.evidence_from_hits(hits)
        exchanges = list(item.history)

        async def count(messages: list[dict[str, str]]) -> int | None:
            return self._count_tokens(messages)

        messages, kept, _ = asyncio.run(
            gateway_prompt.assemble(
                str(artifact["prompt"]["system"]),
                exchanges,
                evidence,
                item.question,
                budgets,
                count,
            )
        )
        payload: dict[str, Any] = {
            "messages": messages,
            "temperature": 0,
            "stream": False,
            "cache_prompt": True,
            "id_slot": self.SLOT,
            "max_tokens": budgets.answer_tokens,
            "chat_template_kwargs": {"enable_thinking": False},
        }
        try:
            response = self.client.post(f"{self.url}/v1/chat/completions", json=payload)
            response.raise_for_status()
            data = response.json()
            text = str(data["choices"][0]["message"]["content"] or "")
            finish = str(data["choices"][0].get("finish_reason") or "")
        except Exception as exc:
            return Answer("", error=f"{type(exc).__name__}: {exc}")
        cited = [
            Citation(int(c["n"]), str(c["url"]), str(c["title"]))
            for c in gateway_prompt.citations(text, kept)
        ]
        return Answer(
            text,
            citations=cited,
            refused=False,
            finish_reason=finish,
            latency_ms=(time.perf_counter() - started) * 1000,
        )


class BrowserEngine:
    """The built site in headless Chromium, asked through ``window.siteKnowledge.ask``."""

    name = "browser"

    DRIVER = Path(__file__).resolve().parent / "browser_driver.mjs"

    def __init__(self, site_dir: Path, engines: str = "wllama") -> None:
        self.site_dir = site_dir
        self.engines = engines
        self.process = subprocess.Popen(
            ["node", str(self.DRIVER), str(site_dir), engines],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._read()
        if not ready.get("ready"):
            raise RuntimeError(f"browser driver failed: {ready}")
        self._info = ready

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("browser driver exited")
        data: dict[str, Any] = json.loads(line)
        return data

    def info(self) -> dict[str, Any]:
        """What the page reported when it loaded."""
        return self._info

    def ask(self, item: Item) -> Answer:
        """One question (with its history) in a fresh tab state."""
        assert self.process.stdin is not None
        request = {"question": item.question, "history": _history(item)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply = self._read()
        if "error" in reply:
            return Answer("", error=str(reply["error"]), latency_ms=float(reply.get("ms", 0)))
        # The box lists cited passages in order of first mention, without their numbers.
        import re

        text = str(reply.get("text", ""))
        markers = list(dict.fromkeys(int(n) for n in re.findall(r"\[(\d{1,3})\]", text)))
        citations = [
            Citation(n, str(c.get("path") or c.get("url", "")), str(c.get("title", "")))
            for n, c in zip(markers, reply.get("citations", []), strict=False)
        ]
        return Answer(
            text,
            citations=citations,
            refused=bool(reply.get("refused")),
            finish_reason="",
            latency_ms=float(reply.get("ms", 0)),
        )

    def close(self) -> None:
        """Stop the driver."""
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=30)
