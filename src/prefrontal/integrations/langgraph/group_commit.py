"""Group commit: the writes that arrive while a commit is in flight share the next one.

A LangGraph store's puts and deletes come one operation at a time, often
from many tasks at once; on a database whose writes can share a transaction
(SQLite's ``Database.batch``: :class:`~prefrontal.stores.durable.Batching`),
each would otherwise be a transaction of its own, one commit (and, with
``synchronous=FULL``, one sync) each, one after another.

:class:`GroupCommit` runs a write as follows. A write that finds no
commit in flight and none waiting is made at once, in a transaction of its
own, as it would be without grouping. The writes arriving while a commit
is in flight wait; when it ends, the first of them leads the next group:
it takes every write waiting (its own among them), runs them at once as
savepoints of one transaction and commits it (a group of one is a
transaction of its own). Each caller returns only once its own write has
committed (or raises its own error: a write that fails is rolled back
alone, its savepoint, and the others still commit; a commit that fails
raises for every write of its group).

A group, once taken, is committed whatever happens to its callers: a
caller cancelled before its write was taken gets its cancellation and the
write never runs; once taken, it waits for the commit, then gets its
cancellation (as a write already in a worker thread does). A write made
inside a ``batch()`` block of the database joins that block's transaction,
as it would alone. Without a batch (in-memory stores), a write runs at once.
The state is kept per event loop: the calls of one loop group together.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio
import anyio.lowlevel

from prefrontal.per_loop import PerLoop
from prefrontal.stores.durable import Batching

T = TypeVar("T")


@dataclass
class _Write(Generic[T]):
    """One caller's write, waiting in a queue until a leader takes it."""

    run: Callable[[], Awaitable[T]]
    woken: anyio.Event = field(default_factory=anyio.Event)
    taken: bool = False
    finished: bool = False
    result: Any = None
    error: BaseException | None = None

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        result: T = self.result
        return result


@dataclass
class _Queue:
    """The writes of one event loop waiting for a group, and whether one is committing."""

    waiting: list[_Write[Any]] = field(default_factory=list)
    leading: bool = False


class GroupCommit:
    """Runs writes in shared transactions of ``database``'s batches (see the module's text).

    ``None`` (a store on no database that batches): each write runs at once.
    A write made inside a batch of that same database joins it, ungrouped.
    """

    def __init__(self, database: Batching | None) -> None:
        self._database = database
        self._queues = PerLoop(_Queue)

    async def run(self, write: Callable[[], Awaitable[T]]) -> T:
        """``await write()`` in the next group's transaction; its result once committed."""
        if self._database is None or self._database.in_batch():
            return await write()
        queue = self._queues.get()
        if not queue.leading and not queue.waiting:
            return await self._alone(queue, write)
        entry: _Write[T] = _Write(write)
        queue.waiting.append(entry)
        while queue.leading:
            await self._wait(queue, entry)
            if entry.finished:
                return entry.outcome()
            entry.woken = anyio.Event()
        await self._lead(queue)
        await anyio.lowlevel.checkpoint_if_cancelled()
        return entry.outcome()

    async def _alone(self, queue: _Queue, write: Callable[[], Awaitable[T]]) -> T:
        """``write()`` in a transaction of its own (nothing to group with), as a group's leader."""
        queue.leading = True
        try:
            return await write()
        finally:
            queue.leading = False
            self._hand_on(queue)

    async def _wait(self, queue: _Queue, entry: _Write[Any]) -> None:
        """Wait to be woken: finished, or asked to lead; cancelled only before being taken."""
        try:
            await entry.woken.wait()
        except anyio.get_cancelled_exc_class():
            if not entry.taken:
                queue.waiting.remove(entry)
                self._hand_on(queue)
                raise
            with anyio.CancelScope(shield=True):
                while not entry.finished:
                    entry.woken = anyio.Event()
                    await entry.woken.wait()
            raise

    async def _lead(self, queue: _Queue) -> None:
        """Commit every waiting write in one transaction, then wake the next leader."""
        assert self._database is not None
        queue.leading = True
        group, queue.waiting = queue.waiting, []
        for entry in group:
            entry.taken = True
        try:
            with anyio.CancelScope(shield=True):
                await self._commit(self._database, group)
        finally:
            queue.leading = False
            for entry in group:
                entry.finished = True
                entry.woken.set()
            self._hand_on(queue)

    @staticmethod
    async def _commit(database: Batching, group: list[_Write[Any]]) -> None:
        """Each write of ``group`` in a savepoint of one transaction (a lone write in a
        transaction of its own); each outcome recorded."""

        async def one(entry: _Write[Any]) -> None:
            try:
                entry.result = await entry.run()
            except Exception as error:
                entry.error = error

        if len(group) == 1:
            await one(group[0])
            return

        try:
            async with database.batch(), anyio.create_task_group() as writes:
                for entry in group:
                    writes.start_soon(one, entry)
        except BaseException as error:
            for entry in group:
                entry.error = entry.error or error
            if not isinstance(error, Exception):
                raise

    @staticmethod
    def _hand_on(queue: _Queue) -> None:
        """Wake the first waiting write to lead, when no group is being committed."""
        if queue.waiting and not queue.leading:
            queue.waiting[0].woken.set()
