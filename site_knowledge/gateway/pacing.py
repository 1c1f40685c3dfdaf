"""Pacing a stream from upstream: a heartbeat for every quiet interval, and a deadline.

A model can be silent for a long time before its first token (a long prompt on a slow CPU,
or a hung process); edge proxies cut streams that stay idle for about 100 s, and a hang
must not hold the model's place for ever. ``paced`` waits for the next item without
cancelling it, so a quiet interval costs nothing but a heartbeat.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")


class DeadlinePassed(Exception):
    """The stream ran past its deadline; the source has been closed."""


async def paced(source: AsyncIterator[T], every_s: float,
                deadline: Callable[[], float]) -> AsyncIterator[T | None]:
    """The items of ``source``, with ``None`` after each ``every_s`` without one.

    Args:
        source: the stream to read.
        every_s: the longest quiet interval before a ``None``.
        deadline: the ``time.monotonic()`` by which the stream must end; read anew at each
            wait, so it may move earlier (a gateway that drains).

    Raises:
        DeadlinePassed: the deadline came first; the pending read was cancelled and awaited,
            so ``source`` has released what it held (an upstream connection).
    """
    while True:
        step: asyncio.Future[T] = asyncio.ensure_future(anext(source))
        try:
            while not step.done():
                remaining = deadline() - time.monotonic()
                if remaining <= 0:
                    raise DeadlinePassed
                await asyncio.wait({step}, timeout=min(every_s, remaining))
                if not step.done():
                    yield None
        finally:
            if not step.done():
                step.cancel()
                with anyio.CancelScope(shield=True):
                    await asyncio.wait({step})
                if not step.cancelled():
                    step.exception()  # retrieved: the error that ends us is the one raised
        try:
            item = step.result()
        except StopAsyncIteration:
            return
        yield item


async def once(call: Callable[[], Awaitable[T]]) -> AsyncIterator[T]:
    """``call()``'s result as a one-item stream, to be ``paced`` like any other (the call
    is made only when the stream is first read)."""
    yield await call()
