"""Server-sent events: the client contract's framing, and a response that always notices
a client going away (so a disconnected waiter leaves the queue and an answer stops)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

SSE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Accel-Buffering": "no",
    "Connection": "keep-alive",
}


def event(payload: dict[str, Any]) -> bytes:
    """One ``data:`` event carrying compact JSON."""
    return b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8"
    ) + b"\n\n"


HEARTBEAT = b": keep-alive\n\n"


class EventStream(StreamingResponse):
    """A ``text/event-stream`` response cancelled as soon as the client disconnects.

    ``on_close`` runs once the response is over, however it ended, even when the events'
    generator never started (its own ``finally`` then never runs).
    """

    media_type = "text/event-stream"

    def __init__(self, events: AsyncIterator[bytes], headers: dict[str, str] | None = None,
                 on_close: Callable[[], None] | None = None):
        super().__init__(events, headers={**SSE_HEADERS, **(headers or {})})
        self.on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._run(receive, send)
        finally:
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:
                with anyio.CancelScope(shield=True):
                    await close()
            if self.on_close is not None:
                self.on_close()

    async def _run(self, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def stream() -> None:
                with contextlib.suppress(OSError):
                    await self.stream_response(send)
                group.cancel_scope.cancel()

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(stream)
            group.start_soon(watch)
