"""Group commit of the LangGraph store's writes: shared transactions, each caller's own outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

pytest.importorskip("langgraph")

from prefrontal.integrations.langgraph import PrefrontalStore
from prefrontal.integrations.langgraph.group_commit import GroupCommit
from prefrontal.stores import sqlite
from tests.conftest import fixed_clock

pytestmark = pytest.mark.anyio


async def in_flight() -> None:
    """A write that takes a few passes of the loop (as one in a worker thread does)."""
    for _ in range(3):
        await anyio.lowlevel.checkpoint()


@dataclass
class Transaction:
    committed: bool = False


class Batches:
    """A database whose batches record their transactions and yield to the loop while
    committing (no caller is ever inside one)."""

    def __init__(self, *, failing_commit: bool = False) -> None:
        self.transactions: list[Transaction] = []
        self.failing_commit = failing_commit

    def in_batch(self) -> bool:
        return False

    @asynccontextmanager
    async def batch(self, *, synced: bool = True) -> AsyncIterator[Transaction]:
        transaction = Transaction()
        self.transactions.append(transaction)
        yield transaction
        for _ in range(3):  # a commit in flight: the loop runs the other callers meanwhile
            await anyio.lowlevel.checkpoint()
        if self.failing_commit:
            raise RuntimeError("commit failed")
        transaction.committed = True


async def test_concurrent_writes_share_transactions_and_return_once_committed() -> None:
    batches = Batches()
    group = GroupCommit(batches)
    returned: dict[int, bool] = {}
    alone: list[int] = []

    async def write(n: int) -> None:
        held_by: list[Transaction] = []

        async def run() -> int:
            held_by.extend(batches.transactions[-1:])  # the transaction its savepoint is in
            await in_flight()
            return n * 10

        assert await group.run(run) == n * 10
        returned[n] = all(t.committed for t in held_by)
        alone.extend([n] if not held_by else [])

    async with anyio.create_task_group() as tasks:
        for n in range(50):
            tasks.start_soon(write, n)
    assert sorted(returned) == list(range(50))
    assert all(returned.values())
    assert alone == [0]  # the first found no commit in flight: a transaction of its own
    assert len(batches.transactions) == 1  # the others arrived meanwhile: one group
    assert all(t.committed for t in batches.transactions)


async def test_a_failing_write_raises_for_its_caller_alone() -> None:
    group = GroupCommit(Batches())
    outcomes: dict[int, str] = {}

    async def write(n: int) -> None:
        async def run() -> int:
            await in_flight()
            if n == 3:
                raise ValueError("refused")
            return n

        try:
            outcomes[n] = str(await group.run(run))
        except ValueError as error:
            outcomes[n] = str(error)

    async with anyio.create_task_group() as tasks:
        for n in range(8):
            tasks.start_soon(write, n)
    assert outcomes == {n: ("refused" if n == 3 else str(n)) for n in range(8)}


async def test_a_failed_commit_raises_for_every_write_of_its_group() -> None:
    group = GroupCommit(Batches(failing_commit=True))
    failed: list[int] = []

    async def write(n: int) -> None:
        async def run() -> None:
            await in_flight()

        if n == 0:  # alone: a transaction of its own, not the failing batch
            await group.run(run)
            return
        with pytest.raises(RuntimeError, match="commit failed"):
            await group.run(run)
        failed.append(n)

    async with anyio.create_task_group() as tasks:
        for n in range(5):
            tasks.start_soon(write, n)
    assert sorted(failed) == [1, 2, 3, 4]


async def test_a_write_cancelled_before_its_group_is_taken_never_runs() -> None:
    group = GroupCommit(Batches())
    ran: list[str] = []

    async def write(name: str) -> None:
        async def run() -> None:
            ran.append(name)
            await in_flight()

        await group.run(run)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(write, "first")  # leads: its commit is in flight
        await anyio.lowlevel.checkpoint()
        with anyio.CancelScope() as scope:
            scope.cancel()
            await write("cancelled")
        tasks.start_soon(write, "last")
    assert ran == ["first", "last"]


async def test_a_lone_write_makes_no_batch() -> None:
    batches = Batches()
    group = GroupCommit(batches)

    async def run() -> str:
        await in_flight()
        return "done"

    assert [await group.run(run) for _ in range(3)] == ["done"] * 3
    assert batches.transactions == []


async def test_without_a_batch_a_write_runs_at_once() -> None:
    group = GroupCommit(None)

    async def run() -> str:
        return "done"

    assert await group.run(run) == "done"


async def test_concurrent_puts_on_sqlite_are_all_durable_in_fewer_commits(tmp_path: Path) -> None:
    """Every put of a burst is readable from a fresh connection, in fewer transactions."""
    stores = sqlite.open_stores(tmp_path / "lg.db")
    database = stores.semantic.database  # type: ignore[attr-defined]
    commits = 0
    begin = database.batch

    @asynccontextmanager
    async def counted(**options: bool) -> AsyncIterator[object]:
        nonlocal commits
        commits += 1
        async with begin(**options) as transaction:
            yield transaction

    database.batch = counted
    store = PrefrontalStore(stores, agent_id="a", user_id="u", clock=fixed_clock)
    try:
        async with anyio.create_task_group() as tasks:
            for n in range(40):
                tasks.start_soon(store.aput, ("notes", "u"), f"k{n}", {"n": n})
        assert 1 <= commits < 40
    finally:
        await stores.aclose()
    reopened = sqlite.open_stores(tmp_path / "lg.db")
    try:
        again = PrefrontalStore(reopened, agent_id="a", user_id="u", clock=fixed_clock)
        found = await again.asearch(("notes",), limit=100)
        assert sorted(item.value["n"] for item in found) == list(range(40))
    finally:
        await reopened.aclose()


async def test_a_put_inside_a_database_batch_joins_it(tmp_path: Path) -> None:
    """A put made inside ``batch()`` is rolled back with that block, as an ungrouped write is."""
    stores = sqlite.open_stores(tmp_path / "lg.db")
    store = PrefrontalStore(stores, agent_id="a", user_id="u", clock=fixed_clock)
    database = stores.semantic.database  # type: ignore[attr-defined]
    try:

        async def failing_block() -> None:
            async with database.batch():
                await store.aput(("notes", "u"), "k", {"text": "undone"})
                raise RuntimeError("the block fails")

        with pytest.raises(RuntimeError):
            await failing_block()
        assert await store.aget(("notes", "u"), "k") is None
        async with database.batch():
            await store.aput(("notes", "u"), "k", {"text": "kept"})
        item = await store.aget(("notes", "u"), "k")
        assert item is not None and item.value == {"text": "kept"}
    finally:
        await stores.aclose()
