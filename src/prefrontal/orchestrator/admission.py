"""Admission control: at most so many turns in flight per orchestrator.

A turn that finds every slot taken waits for one, at most
``config.admission.max_wait_ms`` and never past its own deadline (the wait
counts against it: the turn's clock started before it). A turn that gets no
slot in time is refused with :class:`~prefrontal.errors.OverloadedError`, so
that under overload turns are fast or cleanly refused instead of all slow.

The number of slots is ``max_turns_in_flight``, or, when
``config.admission.adaptive``, an :class:`AdaptiveLimit` under that ceiling
learnt from how long admitted turns hold their slots. Waiting turns are
granted slots first come, first served; a turn arriving while others wait
queues behind them.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from prefrontal.config import AdmissionConfig
from prefrontal.errors import OverloadedError
from prefrontal.orchestrator.adaptive_limit import AdaptiveLimit


class Admission:
    """The slots of one orchestrator's turns (``None`` as the ceiling admits every turn)."""

    def __init__(self, config: AdmissionConfig) -> None:
        self.config = config
        self.limit = _limit(config)
        """The limit in force (``None`` when every turn is admitted)."""
        self.refused = 0
        """Turns refused since the orchestrator was built."""
        self._running = 0
        self._waiting: deque[anyio.Event] = deque()

    @property
    def in_flight(self) -> int:
        """Turns holding a slot now (0 when every turn is admitted)."""
        return self._running

    @asynccontextmanager
    async def admitted(self, seconds_left: float, target_s: float) -> AsyncIterator[None]:
        """Hold a slot for the block; wait at most ``max_wait_ms`` or ``seconds_left`` for one.

        A block that ends normally after more than ``target_s`` lowers an
        adaptive limit, one within it raises it (a block that raises teaches
        nothing: a cancelled turn's time says nothing of the load).
        """
        limit = self.limit
        if limit is None:
            yield
            return
        wait_s = min(self.config.max_wait_ms / 1_000, seconds_left)
        if self._waiting or self._running >= limit.value:
            await self._wait_for_slot(limit, wait_s)
        else:
            self._running += 1
        started = anyio.current_time()
        try:
            yield
        except BaseException:
            self._release(limit)
            raise
        if self.config.adaptive:
            limit.record(started=started, ended=anyio.current_time(), target_s=target_s)
        self._release(limit)

    async def _wait_for_slot(self, limit: AdaptiveLimit, wait_s: float) -> None:
        """Queue for a slot; raise :class:`OverloadedError` when none is granted in ``wait_s``."""
        granted = anyio.Event()
        self._waiting.append(granted)
        try:
            with anyio.move_on_after(wait_s):
                await granted.wait()
        except BaseException:
            self._leave_queue(limit, granted)
            raise
        if granted.is_set():
            return
        self._waiting.remove(granted)
        self.refused += 1
        raise OverloadedError(
            f"{limit.value} turns are in flight and none ended within "
            f"{wait_s * 1_000:.0f} ms: try again shortly",
            retry_after_s=max(1.0, math.ceil(wait_s)),
        )

    def _leave_queue(self, limit: AdaptiveLimit, granted: anyio.Event) -> None:
        """A cancelled waiter gives back the slot it was granted, or leaves the queue."""
        if granted.is_set():
            self._release(limit)
        else:
            self._waiting.remove(granted)

    def _release(self, limit: AdaptiveLimit) -> None:
        """Give a slot back, and grant the waiters what the limit now allows."""
        self._running -= 1
        while self._waiting and self._running < limit.value:
            self._running += 1
            self._waiting.popleft().set()


def _limit(config: AdmissionConfig) -> AdaptiveLimit | None:
    """The limit ``config`` asks for: learnt between its floor and ceiling, fixed, or none."""
    ceiling = config.max_turns_in_flight
    if ceiling is None:
        return None
    floor = min(config.min_turns_in_flight, ceiling) if config.adaptive else ceiling
    return AdaptiveLimit(ceiling, floor=floor)
