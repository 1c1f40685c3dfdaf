"""Engines the battery runs against. Each turns one item (question + history) into an Answer.

- ``GatewayEngine``: the gateway's ``POST /api/ask`` server-sent events.
- ``LlamaEngine``: the model alone: retrieval, the gate and the gateway's own prompt code and
  answer payload, straight to llama-server's ``/v1/chat/completions``, with none of the
  gateway's grounding (no injection refusal, premise notice or claim check), so gateway minus
  llama is what grounding adds.
- ``BrowserEngine``: headless Chromium on the built site, through ``window.siteKnowledge.ask``
  (a checkout's ``evals/browser_driver.mjs`` and its node modules).

The baselines (``site_knowledge.evals.baselines``) are engines too.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from site_knowledge.evals.dataset import Item
from site_knowledge.evals.scorer import Answer, Citation
from site_knowledge.gateway import prompt

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

    CACHE_WAIT_S = 180.0
    """How long ``info`` waits for a freshly started gateway's warm-up."""

    def info(self) -> dict[str, Any]:
        """The gateway's ``/healthz`` (model name and hash when it reports them), once its
        ``warmup`` is over: a gateway just started reads its system prompt first, so the first
        question is timed as a visitor's after a deploy (waited ``CACHE_WAIT_S`` at most)."""
        deadline = time.monotonic() + self.CACHE_WAIT_S
        while True:
            try:
                response = self.client.get(f"{self.url}/healthz")
                health: dict[str, Any] = response.json()
            except Exception as exc:
                health = {"error": repr(exc)}
            if health.get("warmup") != "pending" or time.monotonic() > deadline:
                return {"url": self.url, "healthz": health}
            time.sleep(1.0)

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
        """Stream one answer; EOF without a terminal event is an error. A ``text`` in ``done``
        (the gateway revised what it streamed) is the answer; the stream is kept beside it."""
        body = {"question": item.question, "history": _history(item)}
        started = time.perf_counter()
        first: float | None = None
        text: list[str] = []
        sources: list[dict[str, Any]] | None = None
        revised: str | None = None
        done_refused = False
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
                        done_refused = event.get("refused") is True
                        answer.citations = _numbered(event.get("citations", []))
                        if isinstance(event.get("grounded"), bool):
                            answer.grounded = event["grounded"]
                        if isinstance(event.get("text"), str):
                            revised = event["text"]
                        if isinstance(event.get("standalone"), str):
                            answer.standalone = event["standalone"]
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
        streamed = "".join(text)
        answer.text = streamed if revised is None else revised
        if revised is not None and revised != streamed:
            answer.streamed_text = streamed
        answer.refused = answer.finish_reason == "refused" or done_refused
        answer.latency_ms = (time.perf_counter() - started) * 1000
        answer.first_token_ms = first
        answer.evidence = None if sources is None else _numbered(sources)
        return answer, None


def _numbered(passages: list[dict[str, Any]]) -> list[Citation]:
    """Numbered passages (``sources`` or ``citations`` of the stream) as records."""
    return [Citation(int(p["n"]), str(p.get("url", "")), str(p.get("title", "")), str(p.get("id", "")))
            for p in passages]


class LlamaEngine:
    """llama-server directly, with the prompt the gateway assembles before grounding.

    Retrieval, the gate, prompt assembly and the request body are the gateway's own functions
    (``site_knowledge.retrieval``, ``site_knowledge.gateway.prompt``); the HTTP layer,
    admission, streaming and every grounding step are left out.
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
                evidence=[],
            )
        budgets = prompt.Budgets.from_artifact(artifact)

        async def count(messages: list[dict[str, str]]) -> int | None:
            return self._count_tokens(messages)

        messages, kept, _ = asyncio.run(
            prompt.assemble(
                str(artifact["prompt"]["system"]),
                item.history,
                prompt.evidence_from_hits(result.hits),
                item.question,
                budgets,
                count,
            )
        )
        payload = {
            **prompt.answer_payload(messages, slot=self.SLOT, max_tokens=budgets.answer_tokens),
            "stream": False,
        }
        given = [Citation(e.n, e.url, e.label(), e.passage_id) for e in kept]
        try:
            response = self.client.post(f"{self.url}/v1/chat/completions", json=payload)
            response.raise_for_status()
            data = response.json()
            text = str(data["choices"][0]["message"]["content"] or "")
            finish = str(data["choices"][0].get("finish_reason") or "")
        except Exception as exc:
            return Answer("", error=f"{type(exc).__name__}: {exc}", evidence=given)
        return Answer(
            text,
            citations=_numbered(prompt.citations(text, kept)),
            refused=False,
            finish_reason=finish,
            latency_ms=(time.perf_counter() - started) * 1000,
            evidence=given,
        )


class BrowserEngine:
    """The built site in headless Chromium, asked through ``window.siteKnowledge.ask``.

    The driver is a checkout's ``evals/browser_driver.mjs`` (it shares the browser tests'
    harness and node modules), so this engine runs from a checkout only.
    """

    name = "browser"

    DRIVER = Path("evals") / "browser_driver.mjs"

    def __init__(self, site_dir: Path, engines: str = "wllama", checkout: Path | None = None) -> None:
        driver = (checkout or Path.cwd()) / self.DRIVER
        if not driver.is_file():
            raise RuntimeError(
                f"the browser engine runs from a checkout of site-knowledge: no {self.DRIVER} under "
                f"{driver.parent.parent} (run from the repository root after scripts/setup.sh)"
            )
        self.site_dir = site_dir
        self.engines = engines
        self.process = subprocess.Popen(
            ["node", str(driver), str(site_dir), engines],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._read()
        if not ready.get("ready"):
            raise RuntimeError(f"browser driver failed: {ready}")
        self._info = ready

    def _read(self) -> dict[str, Any]:
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line:
            raise RuntimeError("browser driver exited")
        data: dict[str, Any] = json.loads(line)
        return data

    def info(self) -> dict[str, Any]:
        """What the page reported when it loaded."""
        return self._info

    def ask(self, item: Item) -> Answer:
        """One question (with its history) in a fresh tab state."""
        if self.process.stdin is None:
            raise RuntimeError("browser driver has no input")
        request = {"question": item.question, "history": _history(item)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply = self._read()
        if "error" in reply:
            return Answer("", error=str(reply["error"]), latency_ms=float(reply.get("ms", 0)))
        # The box lists cited passages in order of first mention, without their numbers; a
        # passage's site path ("" for the home page) is what the scorer resolves, the
        # absolute URL only when the box gave no path.
        text = str(reply.get("text", ""))
        markers = list(dict.fromkeys(int(n) for n in prompt.CITATION.findall(text)))
        citations = [
            Citation(n, str(c["path"] if "path" in c else c.get("url", "")), str(c.get("title", "")))
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
