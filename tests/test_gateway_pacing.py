"""Pacing an upstream stream: heartbeats in quiet intervals, and a deadline that closes the
source (so the upstream request, and with it the generation, stops)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from site_knowledge.gateway.pacing import DeadlinePassed, once, paced


def test_quiet_intervals_become_heartbeats_and_items_pass_in_order():
    async def source() -> AsyncIterator[str]:
        await asyncio.sleep(0.35)
        yield "first"
        yield "second"

    async def scenario() -> list[str | None]:
        return [item async for item in paced(source(), 0.1, lambda: time.monotonic() + 60)]

    seen = asyncio.run(scenario())
    assert seen[-2:] == ["first", "second"]
    assert seen[:-2] == [None] * len(seen[:-2]) and len(seen[:-2]) >= 2


def test_the_deadline_closes_the_source_and_raises():
    closed: list[bool] = []

    async def hung() -> AsyncIterator[str]:
        try:
            yield "token"
            await asyncio.sleep(3600)
            yield "never"
        finally:
            closed.append(True)

    async def scenario() -> list[str | None]:
        deadline = time.monotonic() + 0.3
        seen: list[str | None] = []
        with pytest.raises(DeadlinePassed):
            async for item in paced(hung(), 0.1, lambda: deadline):
                seen.append(item)
        return seen

    seen = asyncio.run(scenario())
    assert seen[0] == "token" and None in seen
    assert closed == [True], "the pending read was cancelled and awaited"


def test_a_deadline_that_moves_earlier_is_read_at_each_wait():
    moved = {"at": time.monotonic() + 60}

    async def slow() -> AsyncIterator[int]:
        for i in range(100):
            await asyncio.sleep(0.05)
            yield i

    async def scenario() -> int:
        count = 0
        with pytest.raises(DeadlinePassed):
            async for item in paced(slow(), 1.0, lambda: moved["at"]):
                count += 1
                if item == 2:
                    moved["at"] = time.monotonic()  # the gateway starts draining
        return count

    assert asyncio.run(scenario()) == 3


def test_once_makes_its_call_only_when_read():
    calls: list[int] = []

    async def call() -> int:
        calls.append(1)
        return 7

    async def scenario() -> list[int | None]:
        stream = once(call)
        assert calls == []
        return [item async for item in paced(stream, 1.0, lambda: time.monotonic() + 60)]

    assert asyncio.run(scenario()) == [7] and calls == [1]
