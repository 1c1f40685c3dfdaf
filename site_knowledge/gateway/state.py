"""What one running gateway holds: its index, settings, upstream, queue and counters."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from site_knowledge.grounding.site import SiteGrounding

from . import prompt
from .admission import AdmissionQueue, Ticket
from .config import GatewayConfig
from .metrics import Metrics
from .policy import RateLimiter
from .sse import EventStream
from .upstream import Upstream

if TYPE_CHECKING:
    from site_knowledge.llama.supervisor import Supervisor
    from site_knowledge.retrieval import KnowledgeIndex


Warmup = Literal["pending", "done", "yielded", "failed"]


@dataclass
class Gateway:
    """Everything one running gateway holds."""

    index: KnowledgeIndex
    config: GatewayConfig
    upstream: Upstream
    queue: AdmissionQueue
    metrics: Metrics
    limiter: RateLimiter
    budgets: prompt.Budgets
    counter: prompt.TokenCounter
    grounding: SiteGrounding
    model_sha256: str | None = None
    supervisor: Supervisor | None = None
    primers: dict[asyncio.Task[bool], Ticket] = field(default_factory=dict)
    streams: dict[bytes, int] = field(default_factory=dict)
    """Open event streams per visitor (the rate limiter's salted key)."""
    warmup: Warmup = "pending"
    """The startup primer (``answer.prime_system_prompt``): ``done`` when it read the system
    prompt into the answer slot, ``yielded`` when a visitor came first, ``failed``."""
    closing_at: float | None = None
    _ready: tuple[float, bool] = (0.0, False)

    @property
    def system(self) -> str:
        return str(self.index.artifact["prompt"]["system"])

    @property
    def refusal(self) -> str:
        return str(self.index.artifact["prompt"]["refusal"])

    @property
    def closing(self) -> bool:
        return self.closing_at is not None

    def deadline(self, answer_deadline: float) -> float:
        """An answer's deadline: its own, or the drain's when that comes first."""
        return min(answer_deadline, self.closing_at if self.closing_at is not None else math.inf)

    def drain(self, within_s: float) -> None:
        """Shut down gently: nobody new is admitted, waiters are sent away at once, and the
        answer in progress has ``within_s`` seconds to finish."""
        self.closing_at = time.monotonic() + within_s
        self.queue.close()

    @property
    def search_depth(self) -> int:
        """Ranked passages a question needs: every candidate when the router chooses among
        them, else the answer's evidence."""
        return len(self.index.passages) if self.config.routing else self.config.passages

    def make_way(self) -> None:
        """A visitor waits: the cache primers stop, and their places are free at once."""
        for task, ticket in list(self.primers.items()):
            task.cancel()
            ticket.release()

    def stream(self, owner: bytes, events: AsyncIterator[bytes], headers: dict[str, str],
               on_close: Callable[[], None] | None = None) -> EventStream:
        """An event stream counted among ``owner``'s open streams until it ends."""
        self.streams[owner] = self.streams.get(owner, 0) + 1

        def closed() -> None:
            left = self.streams.pop(owner, 1) - 1
            if left > 0:
                self.streams[owner] = left
            if on_close is not None:
                on_close()

        return EventStream(events, headers=headers, on_close=closed)

    async def ready(self) -> bool:
        at, value = self._ready
        if time.monotonic() - at > 2.0:
            value = any(u["ok"] for u in await self.upstream.health())
            self._ready = (time.monotonic(), value)
        return value
