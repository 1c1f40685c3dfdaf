"""Admission: one active generation, a bounded FIFO of waiters, a maximum wait, and a
per-visitor share of those places so that one visitor's burst cannot take them all.

Queueing lives in memory on purpose: a restart drops the waiters, which is right for
interactive chat on a personal host.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field


class QueueFull(Exception):
    """Every waiting place is taken."""


class VisitorBusy(Exception):
    """This visitor already holds its share of the places (active and waiting)."""


class QueueTimeout(Exception):
    """The ticket waited longer than the maximum wait."""


class QueueClosed(Exception):
    """The gateway is shutting down: nobody new gets a place, waiters are sent away."""


@dataclass(eq=False)
class Ticket:
    """A request's place: waiting, then active, then released."""

    queue: AdmissionQueue
    owner: object = None
    """Who holds the ticket (an opaque visitor key); ``None`` for the gateway's own work."""
    entered: float = field(default_factory=time.monotonic)
    granted_at: float | None = None
    released: bool = False
    _wake: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def active(self) -> bool:
        return self.queue.active is self

    @property
    def position(self) -> int:
        """1-based place among the waiters; 0 when active."""
        if self.active:
            return 0
        return self.queue.waiters.index(self) + 1

    @property
    def waited_s(self) -> float:
        end = self.granted_at if self.granted_at is not None else time.monotonic()
        return end - self.entered

    async def wait(self, heartbeat_s: float, max_wait_s: float) -> AsyncIterator[int | None]:
        """Wait for the turn, yielding each new position and ``None`` as a heartbeat.

        Returns when the ticket is active. Raises ``QueueTimeout`` after ``max_wait_s`` and
        ``QueueClosed`` when the queue closes meanwhile.
        """
        last = 0
        deadline = self.entered + max_wait_s
        while not self.active:
            if self.queue.closed:
                self.release()
                raise QueueClosed
            position = self.position
            if position != last:
                last = position
                yield position
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.release()
                raise QueueTimeout
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), min(heartbeat_s, remaining))
            except TimeoutError:
                if not self.active and time.monotonic() < deadline:
                    yield None

    def release(self) -> None:
        """Leave the queue or give up the active place; idempotent."""
        if self.released:
            return
        self.released = True
        self.queue._leave(self)


class AdmissionQueue:
    """One active ticket and at most ``max_waiters`` waiting ones, first in first out; one
    owner holds at most ``per_owner`` of those places at a time (``None``: no cap)."""

    def __init__(self, max_waiters: int = 10, per_owner: int | None = None) -> None:
        self.max_waiters = max_waiters
        self.per_owner = per_owner
        self.active: Ticket | None = None
        self.waiters: list[Ticket] = []
        self.left_waiting = 0
        self.closed = False

    @property
    def depth(self) -> int:
        return len(self.waiters)

    def held_by(self, owner: object) -> int:
        """How many places (active and waiting) ``owner`` holds."""
        held = sum(1 for waiter in self.waiters if waiter.owner == owner)
        return held + (1 if self.active is not None and self.active.owner == owner else 0)

    def enter(self, owner: object = None) -> Ticket:
        """Take a place for ``owner``, active at once when nobody is ahead.

        Raises:
            VisitorBusy: ``owner`` already holds ``per_owner`` places.
            QueueFull: every waiting place is taken.
            QueueClosed: the queue was closed.
        """
        if self.closed:
            raise QueueClosed
        if (owner is not None and self.per_owner is not None
                and self.held_by(owner) >= self.per_owner):
            raise VisitorBusy
        ticket = Ticket(self, owner)
        if self.active is None and not self.waiters:
            self._grant(ticket)
        elif len(self.waiters) >= self.max_waiters:
            raise QueueFull
        else:
            self.waiters.append(ticket)
        return ticket

    def enter_if_idle(self) -> Ticket | None:
        """The active place when nobody holds it or waits for it (and the queue is open), else
        ``None``."""
        if self.closed or self.active is not None or self.waiters:
            return None
        return self.enter()

    def close(self) -> None:
        """Admit nobody new and wake every waiter to leave; the active ticket keeps its place."""
        self.closed = True
        for waiter in self.waiters:
            waiter._wake.set()

    def _grant(self, ticket: Ticket) -> None:
        self.active = ticket
        ticket.granted_at = time.monotonic()
        ticket._wake.set()

    def _leave(self, ticket: Ticket) -> None:
        if self.active is ticket:
            self.active = None
        elif ticket in self.waiters:
            self.waiters.remove(ticket)
            self.left_waiting += 1
        if self.active is None and self.waiters:
            self._grant(self.waiters.pop(0))
        for waiter in self.waiters:
            waiter._wake.set()
