"""Group commit: writes that queue while one commits share the next transaction.

SQLite has one writer, and with ``synchronous=FULL`` each commit costs an
fsync. Under concurrency that makes the disk, not the work, the limit. Here
the writes waiting when the writer comes free run in one transaction, each
in its own savepoint, and commit with one fsync:

- a write's caller returns only after the transaction holding it committed,
  so what returned is as durable as before;
- a write that fails rolls back to its savepoint alone and its caller gets
  its error; the others commit;
- a commit that fails fails every write of the batch, none of which is then
  in the database (all or nothing, as one transaction is);
- a caller cancelled while its write is still queued takes it out: it never
  runs. Once its batch is running (a worker thread cannot be stopped) the
  caller waits for the outcome, and the cancellation takes effect after it;
- the writes of a batch run in the order their callers queued them.

The leader (the caller that finds the writer free) waits for another
process's lock in slices, as every write did, so a deadline still ends the
wait; if the leader is cancelled there, its batch goes back to the queue
and another caller leads it.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Awaitable, Callable
from enum import Enum
from functools import partial
from typing import Any, Generic, TypeVar

import anyio

T = TypeVar("T")

LOCK_PAUSE_S = 0.002
"""The pause between two tries for another process's lock, where a deadline or a
cancellation can end the wait."""


class _State(Enum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"


class Write(Generic[T]):
    """One caller's write: its function, then its result or its error."""

    __slots__ = ("_result", "error", "fn", "state", "store")

    def __init__(self, fn: Callable[[sqlite3.Connection], T], store: str) -> None:
        self.fn = fn
        self.store = store
        self.state = _State.QUEUED
        self.error: BaseException | None = None
        self._result: T | None = None

    def succeed(self, result: T) -> None:
        """Record the result (the batch then committed)."""
        self._result, self.state = result, _State.FINISHED

    def fail(self, error: BaseException) -> None:
        """Record the error this write's caller gets."""
        self.error, self.state = error, _State.FINISHED

    def outcome(self) -> T:
        """The result, or the error raised."""
        if self.error is not None:
            raise self.error
        return self._result  # type: ignore[return-value]


Batch = list[Write[Any]]
Runner = Callable[[Batch, float], Awaitable[bool]]
"""Runs a batch first tried at the given time (``anyio.current_time()``) in a
worker thread: True once every write in it is finished, False when the
writer's lock could not be had yet and the wait goes on (nothing ran)."""
Guard = Callable[[Callable[[], Any], str], Any]
"""Maps SQLite's errors to prefrontal's for one call."""


class GroupCommit:
    """The queue of writes and who leads the next batch. Event-loop side only."""

    def __init__(self) -> None:
        self._queue: deque[Write[Any]] = deque()
        self._leading = False
        self._round_over = anyio.Event()

    async def write(self, write: Write[T], run: Runner) -> T:
        """Queue ``write``, lead batches or wait for them until it finished; its outcome."""
        self._queue.append(write)
        try:
            while write.state is not _State.FINISHED:
                if self._leading:
                    await self._round_over.wait()
                else:
                    await self._lead(run)
        except BaseException:
            await self._abandon(write)
            raise
        return write.outcome()

    async def _lead(self, run: Runner) -> None:
        """Run every queued write as one batch, until it ran; requeue it if interrupted."""
        self._leading = True
        batch = list(self._queue)
        self._queue.clear()
        for write in batch:
            write.state = _State.RUNNING
        started = anyio.current_time()
        try:
            while not await run(batch, started):  # noqa: ASYNC110 - polls another process's lock
                await anyio.sleep(LOCK_PAUSE_S)
        except BaseException:
            unfinished = [write for write in batch if write.state is _State.RUNNING]
            for write in reversed(unfinished):
                write.state = _State.QUEUED
                self._queue.appendleft(write)
            raise
        finally:
            self._leading = False
            round_over, self._round_over = self._round_over, anyio.Event()
            round_over.set()

    async def _abandon(self, write: Write[Any]) -> None:
        """A cancelled or failed caller: take its write out, or wait for the batch holding it."""
        with anyio.CancelScope(shield=True):
            while write.state is _State.RUNNING:
                await self._round_over.wait()
        if write.state is _State.QUEUED:
            self._queue.remove(write)


def run_batch(connection: sqlite3.Connection, batch: Batch, guard: Guard) -> None:
    """In a worker thread: ``batch`` in one ``BEGIN IMMEDIATE`` transaction, a savepoint each.

    ``connection`` must be in no transaction. The ``BEGIN`` raising (the
    lock is held elsewhere) propagates with nothing run; after it, every
    write is finished, with its result or its error.
    """
    guard(lambda: connection.execute("BEGIN IMMEDIATE"), batch[0].store)
    done: list[tuple[Write[Any], Any]] = []
    try:
        for write in batch:
            connection.execute("SAVEPOINT prefrontal_write")
            try:
                result = guard(partial(write.fn, connection), write.store)
            except Exception as error:
                connection.execute("ROLLBACK TO prefrontal_write")
                connection.execute("RELEASE prefrontal_write")
                write.fail(error)
                continue
            connection.execute("RELEASE prefrontal_write")
            done.append((write, result))
        guard(lambda: connection.execute("COMMIT"), batch[0].store)
    except BaseException as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        for write in batch:
            if write.state is _State.RUNNING:
                write.fail(error)
        if not isinstance(error, Exception):
            raise
        return
    for write, result in done:
        write.succeed(result)
