"""Reads started ahead of the phase that uses them, beside the loading phases.

A phase that learns early what a later one will read starts the read at
once, in the loading phases' task group, instead of leaving it on the
turn's critical path:

- phase 1 starts the store reads of phases 2, 3 and 4 before it loads the
  session's buffer (they do not depend on it). The phases still run after
  phase 1, as the specification orders them, and wait for their read with
  :func:`taken`: its value, or its error re-raised there, so the phase
  fails as if it had read itself; a phase cancelled while it waits cancels
  its read;
- once phase 1 finds the session new, it starts the read of the user's
  recent sessions that phase 10 links it to. Phase 10 takes
  :meth:`Ahead.result` without waiting: by then the loading phases' task
  group has ended, and the read with it (or it was cut off by its time
  limit, and phase 10 reads itself).

Each read is bounded by its own time limit. Where nothing can run beside
the phases (sequential mode), nothing is started ahead and each phase
reads itself. Cancellation is never caught.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar, cast

import anyio

__all__ = ["Ahead", "Spawn", "start_ahead", "taken"]

T = TypeVar("T")
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], object]
"""Starts a job beside the loading phases (the runner's task group, while they run)."""


class Ahead(Generic[T]):
    """One read running ahead of the phase that wants its value."""

    __slots__ = ("_ended", "_error", "_finished", "_scope", "_value")

    def __init__(self) -> None:
        self._finished = False
        self._value: T | None = None
        self._error: Exception | None = None
        self._ended = anyio.Event()
        self._scope = anyio.CancelScope()

    async def run(self, read: Callable[[], Awaitable[T]], seconds: float) -> None:
        """Run ``read`` for at most ``seconds``; keep its value or its error for :meth:`result`."""
        self._scope.deadline = anyio.current_time() + seconds
        try:
            with self._scope:
                try:
                    self._value = await read()
                except Exception as error:  # re-raised by result(), in the phase using the value
                    self._error = error
                self._finished = True
        finally:
            self._ended.set()

    async def take(self, read: Callable[[], Awaitable[T]]) -> T:
        """The read's value once it ends (its error raised); ``read()`` itself if it was cut off.

        For a phase that waits for a read started ahead of it: a phase
        cancelled while it waits cancels the read too.
        """
        try:
            await self._ended.wait()
        except BaseException:
            self._scope.cancel()
            raise
        if not self._finished:
            return await read()
        if self._error is not None:
            raise self._error
        return cast(T, self._value)  # finished without an error: the read's value

    def result(self) -> T | None:
        """The read's value; its error raised; ``None`` while unfinished or once cut off."""
        if self._error is not None:
            raise self._error
        return self._value if self._finished else None


async def taken(ahead: Ahead[T] | None, read: Callable[[], Awaitable[T]]) -> T:
    """``ahead``'s value when a read was started ahead (:meth:`Ahead.take`), else ``read()``."""
    if ahead is None:
        return await read()
    return await ahead.take(read)


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
