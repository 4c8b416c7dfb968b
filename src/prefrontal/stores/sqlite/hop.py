"""A worker-thread hop for the database's calls: ``anyio.to_thread.run_sync``'s contract, at
a quarter of its cost on asyncio.

A turn on SQLite makes about eight hops (its reads gathered per phase, the exchange's write,
the batch behind the turn and its commit). ``anyio.to_thread.run_sync`` yields to the loop
before it begins, takes the limiter with another yield, hands the call to its worker over a
``queue.Queue`` (a condition and its locks) and sets up a cancel scope for the thread: about
250,000 instructions a hop, 50 µs of CPU. :func:`run_sync` keeps what a caller sees and
drops the rest: on asyncio it checks for a cancellation without yielding, takes a free
limiter slot at once (waiting only for a busy one), hands the call to an idle thread of its
own over a ``queue.SimpleQueue`` and waits, shielded, for the loop to be woken with the
outcome (about 60,000 instructions). Elsewhere (trio) it is ``anyio.to_thread.run_sync``.

The contract, as ``anyio.to_thread.run_sync`` (``abandon_on_cancel=False``) keeps it: the
call runs in a worker thread, in a copy of the caller's context, under ``limiter`` when one
is given; a caller cancelled before its call has begun gets its cancellation and the call
never runs; once it has begun, the caller waits for its end (a thread cannot be cancelled)
and the cancellation is raised at its next checkpoint; the call's exception is raised to the
caller. The threads are the process's own: a thread idle for :data:`IDLE_S` ends, none
keeps the process from exiting, and a child forked from the process starts with none (the
parent's threads do not exist in it).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import queue
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

T = TypeVar("T")

IDLE_S = 10.0
"""Seconds a worker thread waits for a call before it ends (anyio's own workers wait as long)."""

_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


async def run_sync(
    fn: Callable[..., T], *args: Any, limiter: anyio.CapacityLimiter | None = None
) -> T:
    """``fn(*args)`` in a worker thread under ``limiter`` (the module's contract)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: anyio's own hop
        return await anyio.to_thread.run_sync(fn, *args, limiter=limiter)
    await anyio.lowlevel.checkpoint_if_cancelled()
    if limiter is not None:
        try:
            limiter.acquire_nowait()
        except anyio.WouldBlock:
            await limiter.acquire()
    try:
        call = partial(contextvars.copy_context().run, fn, *args)
        future: asyncio.Future[T] = loop.create_future()
        _POOL.take().inbox.put((call, loop, future))
        with anyio.CancelScope(shield=True):
            outcome = await future
    finally:
        if limiter is not None:
            limiter.release()
    return outcome


class _Worker(threading.Thread):
    """A thread running the calls handed to it, one at a time, until it has idled
    :data:`IDLE_S` seconds."""

    def __init__(self, pool: _Pool) -> None:
        super().__init__(name="prefrontal-sqlite-worker", daemon=True)
        self.pool = pool
        self.inbox: queue.SimpleQueue[_Job] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            try:
                call, loop, future = self.inbox.get(timeout=IDLE_S)
            except queue.Empty:
                if self.pool.retired(self):
                    return
                continue  # taken as it timed out: its call is on its way
            result: Any = None
            error: BaseException | None = None
            try:
                result = call()
            except BaseException as raised:  # delivered to the caller, raised there
                error = raised
            self.pool.idle(self)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for it
                loop.call_soon_threadsafe(_deliver, future, result, error)
            del call, loop, future, result, error  # nothing of the call kept while idle


def _deliver(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    """On the loop: the call's outcome to its caller (unless the caller's task was cancelled
    by asyncio itself, outside anyio's shield)."""
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class _Pool:
    """The idle worker threads, shared by every loop of the process (a call carries its loop)."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()

    def take(self) -> _Worker:
        """An idle worker, or a new one."""
        with self._lock:
            if self._idle:
                return self._idle.pop()
        worker = _Worker(self)
        worker.start()
        return worker

    def idle(self, worker: _Worker) -> None:
        """``worker`` is free for another call."""
        with self._lock:
            self._idle.append(worker)

    def forked(self) -> None:
        """In a child process just forked: none of the parent's threads exists in it."""
        self._idle, self._lock = [], threading.Lock()

    def retired(self, worker: _Worker) -> bool:
        """Whether ``worker``, idle too long, may end: ``False`` when it was just taken."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


_POOL = _Pool()
os.register_at_fork(after_in_child=_POOL.forked)
