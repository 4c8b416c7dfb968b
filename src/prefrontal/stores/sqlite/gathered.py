"""Calls made within a couple of passes of the event loop, run in one worker-thread hop.

A hop to a worker thread and back costs tens of microseconds of CPU (the
thread woken, the loop woken back), more than most statements of a turn.
A turn's loading phases start together and each asks its store for a read
in the same pass of the loop, so :class:`Gathered` lets those calls share
one hop: the first call waits :data:`PASSES` passes of the loop (a
checkpoint each), then hands the hop to a worker thread; every call made
until that thread begins it (while the hop waits for a limiter slot or for
the thread to be scheduled, which on a busy machine is often long enough
for the next phase's reads) joins it. The thread runs them one after
another; the others wait for their results. A hop takes at most
:data:`MOST_CALLS` calls: while every slot of a pool is busy, the calls
beyond them make hops of their own, which other threads may run at once.

Each call keeps what it would have alone: its own function, run in its own
context (the caller's context variables, copied when it asked), its own
result or exception, delivered to its own caller. Only the thread and the
limiter slot are shared. Cancellation is as ``anyio.to_thread.run_sync``'s:
a caller cancelled before its call has begun in the thread gets its
cancellation and the call never runs; once it has begun, the caller waits
for it to end, gets its outcome, and the cancellation at its next
checkpoint. If the first caller is cancelled before the hop begins, the
hop never runs and each other caller runs its call itself.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

T = TypeVar("T")
PASSES = 2
"""Passes of the event loop a hop waits for calls to join it: a turn's recall phases ask
for their searches a pass after the first reads (in the growing conversation of
``tests.benchmarks.growing_turn``: 6.6 hops of reads a turn with two, 8.1 with one)."""

MOST_CALLS = 8
"""Calls one hop runs at most (a turn's largest hop of reads has six)."""


class _Call(Generic[T]):
    """One caller's call: the function, its context, then its outcome."""

    __slots__ = ("context", "error", "fn", "lock", "ran", "result", "withdrawn")

    def __init__(self, fn: Callable[[], T]) -> None:
        self.fn = fn
        self.context = contextvars.copy_context()
        self.ran = self.withdrawn = False
        self.lock = threading.Lock()
        self.result: T | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        """Run the function in the caller's context, keeping its result or its exception;
        nothing when its caller withdrew it (cancelled) first."""
        with self.lock:
            if self.withdrawn:
                return
            self.ran = True
        try:
            self.result = self.context.run(self.fn)
        except BaseException as error:  # delivered to its caller, raised there
            self.error = error

    def withdraw(self) -> bool:
        """Keep the call from running; ``False`` when it has begun already."""
        with self.lock:
            self.withdrawn = not self.ran
            return self.withdrawn

    async def waited(self, done: anyio.Event) -> bool:
        """Wait for the hop (``done``: its end); whether the call ran. A cancellation before
        the call has begun withdraws it and is raised; after, it waits for the call's end
        (then raised later)."""
        try:
            await done.wait()
        except anyio.get_cancelled_exc_class():
            if self.withdraw():
                raise
            with anyio.CancelScope(shield=True):
                await done.wait()
        return self.ran

    def outcome(self) -> T:
        """The result, or the exception raised again (its traceback kept)."""
        if self.error is not None:
            error, self.error = self.error, None  # no reference cycle through the frame
            raise error
        return self.result  # type: ignore[return-value]


class _Hop:
    """The calls of one hop, and the event its other callers wait on, made when the first of
    them joins (one for all: a hop of one call makes none)."""

    __slots__ = ("calls", "done")

    def __init__(self, first: _Call[Any]) -> None:
        self.calls = [first]
        self.done: anyio.Event | None = None

    def joined(self) -> anyio.Event:
        """The event set when the hop has ended, for a caller that joined it."""
        if self.done is None:
            self.done = anyio.Event()
        return self.done

    def run_all(self) -> None:
        """Each call in turn, in the worker thread: one's exception never stops the next."""
        for call in self.calls:
            call.run()


class Gathered:
    """Run blocking calls in worker threads, the calls made within :data:`PASSES` passes of
    the loop together.

    One instance serves one event loop (see
    :class:`~prefrontal.per_loop.PerLoop`).
    """

    def __init__(self) -> None:
        self._pending: _Hop | None = None
        """The hop still open to other calls, until its worker thread begins it."""
        self._lock = threading.Lock()
        """Guards :attr:`_pending`: the loop joins calls to it, the worker thread closes it."""

    async def run(self, fn: Callable[[], T], limiter: anyio.CapacityLimiter) -> T:
        """``fn()`` in a worker thread under ``limiter``, with the calls made meanwhile."""
        call = _Call(fn)
        with self._lock:
            hop = self._pending
            if hop is not None:
                hop.calls.append(call)
            else:
                self._pending = hop = _Hop(call)
            if len(hop.calls) >= MOST_CALLS:  # full: the next call begins a hop of its own
                self._pending = None
        if hop.calls[0] is not call:
            if not await call.waited(hop.joined()):  # its first caller was cancelled first
                return await anyio.to_thread.run_sync(fn, limiter=limiter)
            return call.outcome()
        try:
            for _ in range(PASSES):
                await anyio.lowlevel.checkpoint()
            await anyio.to_thread.run_sync(self._closed_and_run, hop, limiter=limiter)
        finally:
            self._close(hop)  # a hop cancelled before its thread began: no call joins it now
            if hop.done is not None:
                hop.done.set()
        return call.outcome()

    def _closed_and_run(self, hop: _Hop) -> None:
        """In the worker thread: close the hop to later calls, then run each call of it."""
        self._close(hop)
        hop.run_all()

    def _close(self, hop: _Hop) -> None:
        """No call joins ``hop`` from now on (a later one begins a hop of its own)."""
        with self._lock:
            if self._pending is hop:
                self._pending = None
