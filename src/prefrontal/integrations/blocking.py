"""Prefrontal's event loop for synchronous callers: one thread, started once, under a lock.

A framework running a graph or an agent synchronously calls its hooks from
plain threads, often several at once (parallel nodes). :class:`BlockingLoop`
runs prefrontal's coroutines there on one event loop thread of its own (an
anyio blocking portal), started by the first caller under a lock so that
parallel first calls share it. :meth:`BlockingLoop.entered` also enters an
async context manager (an :class:`~prefrontal.orchestrator.Orchestrator`:
its stores and background runners) on that loop, so every store connection
lives on the one loop that uses it.

A sync method called from a thread whose event loop is running would block
that loop for the whole turn: :meth:`BlockingLoop.call` refuses it with
:class:`SyncFromRunningLoop`, naming the async method to await instead.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any, TypeVar

import anyio
import anyio.from_thread

T = TypeVar("T")

__all__ = ["BlockingLoop", "SyncFromRunningLoop"]


class SyncFromRunningLoop(RuntimeError):
    """A sync hook called on a thread whose event loop runs: the async hook is the one to use."""


class BlockingLoop:
    """One event loop thread for sync callers, started by the first :meth:`call`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._context: Any = None
        self._portal: anyio.from_thread.BlockingPortal | None = None

    def portal(self) -> anyio.from_thread.BlockingPortal:
        """The running portal, started once under the lock by the first caller."""
        with self._lock:
            if self._portal is None:
                context = anyio.from_thread.start_blocking_portal()
                self._portal = context.__enter__()
                self._context = context
            return self._portal

    def call(self, call: Callable[[], Awaitable[T]], *, instead: str = "the async method") -> T:
        """Await ``call()`` on the loop thread and return its result, from sync code.

        Raises :class:`SyncFromRunningLoop` on a thread whose event loop is
        running (``instead`` names what to await there).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self.portal().call(call)
        raise SyncFromRunningLoop(
            f"a sync prefrontal hook was called from a running event loop, which it would "
            f"block for the whole turn: await {instead} there"
        )

    @contextmanager
    def entered(self, manager: AbstractAsyncContextManager[T]) -> Iterator[T]:
        """``async with manager`` on the loop thread, for the block's duration."""
        with self.portal().wrap_async_context_manager(manager) as value:
            yield value

    def close(self) -> None:
        """Stop the loop thread (started again by the next call)."""
        with self._lock:
            context, self._context, self._portal = self._context, None, None
        if context is not None:
            context.__exit__(None, None, None)
