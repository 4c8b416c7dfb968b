"""Admission control: at most so many turns in flight per orchestrator.

A turn that finds every slot taken waits for one, at most
``config.admission.max_wait_ms`` and never past its own deadline (the wait
counts against it: the turn's clock started before it). A turn that gets no
slot in time is refused with :class:`~prefrontal.errors.OverloadedError`, so
that under overload turns are fast or cleanly refused instead of all slow.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from prefrontal.config import AdmissionConfig
from prefrontal.errors import OverloadedError


class Admission:
    """The slots of one orchestrator's turns (``None`` as the limit admits every turn)."""

    def __init__(self, config: AdmissionConfig) -> None:
        self.config = config
        limit = config.max_turns_in_flight
        self._slots = anyio.Semaphore(limit) if limit is not None else None
        self.refused = 0
        """Turns refused since the orchestrator was built."""

    @property
    def in_flight(self) -> int:
        """Turns holding a slot now (0 when every turn is admitted)."""
        if self._slots is None or self.config.max_turns_in_flight is None:
            return 0
        return self.config.max_turns_in_flight - self._slots.value

    @asynccontextmanager
    async def admitted(self, seconds_left: float) -> AsyncIterator[None]:
        """Hold a slot for the block; wait at most ``max_wait_ms`` or ``seconds_left`` for one."""
        slots = self._slots
        if slots is None:
            yield
            return
        wait_s = min(self.config.max_wait_ms / 1_000, seconds_left)
        acquired = False
        with anyio.move_on_after(wait_s):
            await slots.acquire()
            acquired = True
        if not acquired:
            self.refused += 1
            raise OverloadedError(
                f"{self.config.max_turns_in_flight} turns are in flight and none ended within "
                f"{wait_s * 1_000:.0f} ms: try again shortly",
                retry_after_s=max(1.0, math.ceil(wait_s)),
            )
        try:
            yield
        finally:
            slots.release()
