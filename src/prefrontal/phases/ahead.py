"""Reads started ahead of the phase that uses them, beside the loading phases.

A phase that learns early what a later one will read (phase 1 learns that
the session is new, so phase 10 will link it to the user's recent sessions)
starts the read at once, in the loading phases' task group, instead of
leaving it on the turn's critical path. The read is bounded by its own time
limit, and, as it runs in the loading phases' task group, it has ended
(or been cut off by the deadline) before any assembly phase starts: the
later phase takes its :meth:`Ahead.result` without waiting, the value or
the error the read raised (re-raised there, so that phase fails as if it
had read itself). A read cut off gives ``None``: the later phase reads
itself. Where nothing can run beside the phases (sequential mode), nothing
is started ahead. Cancellation is never caught.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

import anyio

__all__ = ["Ahead", "Spawn", "start_ahead"]

T = TypeVar("T")
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], object]
"""Starts a job beside the loading phases (the runner's task group, while they run)."""


class Ahead(Generic[T]):
    """One read running ahead of the phase that wants its value."""

    __slots__ = ("_error", "_finished", "_value")

    def __init__(self) -> None:
        self._finished = False
        self._value: T | None = None
        self._error: Exception | None = None

    async def run(self, read: Callable[[], Awaitable[T]], seconds: float) -> None:
        """Run ``read`` for at most ``seconds``; keep its value or its error for :meth:`result`."""
        with anyio.move_on_after(seconds):
            try:
                self._value = await read()
            except Exception as error:  # re-raised by result(), in the phase that uses the value
                self._error = error
            self._finished = True

    def result(self) -> T | None:
        """The read's value; its error raised; ``None`` while unfinished or once cut off."""
        if self._error is not None:
            raise self._error
        return self._value if self._finished else None


def start_ahead(
    spawn: Spawn | None, read: Callable[[], Awaitable[T]], seconds: float
) -> Ahead[T] | None:
    """``read`` started through ``spawn``, for at most ``seconds``; ``None`` without a spawn."""
    if spawn is None:
        return None
    ahead: Ahead[T] = Ahead()

    async def job() -> None:
        await ahead.run(read, seconds)

    spawn(job)
    return ahead
