"""Calls made in one pass of the event loop, run in one worker-thread hop.

A hop to a worker thread and back costs tens of microseconds of CPU (the
thread woken, the loop woken back), more than most statements of a turn.
A turn's loading phases start together and each asks its store for a read
in the same pass of the loop, so :class:`Gathered` lets those calls share
one hop: the first call of a pass waits for the pass to end (one
checkpoint), then runs every call made meanwhile, one after another, in
one worker thread; the others wait for their results.

Each call keeps what it would have alone: its own function, run in its own
context (the caller's context variables, copied when it asked), its own
result or exception, delivered to its own caller. Only the thread and the
limiter slot are shared. A caller cancelled while it waits gets its
cancellation; the call it asked for may still run (a read: nothing is
lost). If the first caller is cancelled before the hop begins, the hop
never runs and each other caller runs its call itself.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

T = TypeVar("T")


class _Call(Generic[T]):
    """One caller's call: the function, its context, then its outcome."""

    __slots__ = ("context", "done", "error", "fn", "ran", "result")

    def __init__(self, fn: Callable[[], T]) -> None:
        self.fn = fn
        self.context = contextvars.copy_context()
        self.done = anyio.Event()
        self.ran = False
        self.result: T | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        """Run the function in the caller's context, keeping its result or its exception."""
        self.ran = True
        try:
            self.result = self.context.run(self.fn)
        except BaseException as error:  # delivered to its caller, raised there
            self.error = error

    def outcome(self) -> T:
        """The result, or the exception raised again (its traceback kept)."""
        if self.error is not None:
            error, self.error = self.error, None  # no reference cycle through the frame
            raise error
        return self.result  # type: ignore[return-value]


def _run_all(calls: list[_Call[Any]]) -> None:
    """Each call in turn, in the worker thread: one's exception never stops the next."""
    for call in calls:
        call.run()


class Gathered:
    """Run blocking calls in worker threads, the calls made in one pass of the loop together.

    One instance serves one event loop (see
    :class:`~prefrontal.stores.sqlite.per_loop.PerLoop`).
    """

    def __init__(self) -> None:
        self._pending: list[_Call[Any]] | None = None

    async def run(self, fn: Callable[[], T], limiter: anyio.CapacityLimiter) -> T:
        """``fn()`` in a worker thread under ``limiter``, with the pass's other calls."""
        call = _Call(fn)
        if self._pending is not None:
            self._pending.append(call)
            await call.done.wait()
            if not call.ran:  # the hop's first caller was cancelled before it began
                return await anyio.to_thread.run_sync(fn, limiter=limiter)
            return call.outcome()
        self._pending = calls = [call]
        try:
            try:
                await anyio.lowlevel.checkpoint()
            finally:
                self._pending = None
            await anyio.to_thread.run_sync(_run_all, calls, limiter=limiter)
        finally:
            for other in calls[1:]:
                other.done.set()
        return call.outcome()
