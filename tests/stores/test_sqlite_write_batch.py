"""A turn's writes behind it share one SQLite transaction, and only what committed counts as written.

Savepoints keep each write atomic on its own: one that fails is undone
alone; a batch that does not commit leaves nothing and is counted as failed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from prefrontal import Stores
from prefrontal.config import WritesConfig
from prefrontal.demo import seed
from prefrontal.errors import StoreError
from prefrontal.orchestrator.writes import TurnWrites
from prefrontal.phases.finalize import TurnWrite
from prefrontal.stores import Tenant, sqlite
from prefrontal.stores.durable import Committed, shared_batch
from prefrontal.stores.sqlite import Database
from prefrontal.stores.working_memory import SessionKey
from tests.conftest import demo_request, orchestrator
from tests.stores.test_sqlite_gathered import counting_hops

pytestmark = pytest.mark.anyio
SESSION = SessionKey(agent_id="a", user_id="u", session_id="s")


def insert(value: str) -> Callable[[sqlite3.Connection], None]:
    """A write that adds ``value`` to the scratch table ``t``."""

    def run(connection: sqlite3.Connection) -> None:
        connection.execute("CREATE TABLE IF NOT EXISTS t (v TEXT)")
        connection.execute("INSERT INTO t VALUES (?)", (value,))

    return run


def broken(connection: sqlite3.Connection) -> None:
    """A write that inserts a row, then fails on SQL SQLite rejects."""
    connection.execute("INSERT INTO t VALUES ('half')")
    connection.execute("INSERT INTO nowhere VALUES (1)")


async def rows(database: Database) -> list[str]:
    """The values of table ``t``, as a reader sees them."""
    found = await database.read(lambda c: c.execute("SELECT v FROM t").fetchall(), store="t")
    return sorted(v for (v,) in found)


async def test_a_failed_write_in_a_batch_is_undone_alone(tmp_path: Path) -> None:
    """In one batch, the rows of a write that raised are gone and the others commit."""
    database = Database(tmp_path / "batch.db")
    await database.write(insert("before"), store="t")
    async with database.batch() as batch:
        await database.write(insert("kept"), store="t")
        with pytest.raises(StoreError, match="no such table"):
            await database.write(broken, store="t")
        assert await rows(database) == ["before"]  # not visible before the commit
    assert batch.committed
    assert await rows(database) == ["before", "kept"]
    await database.aclose()


async def test_a_batch_whose_block_raises_leaves_nothing(tmp_path: Path) -> None:
    """An exception out of the block rolls every write of the batch back, uncommitted."""
    database = Database(tmp_path / "batch.db")
    await database.write(insert("before"), store="t")
    opened: list[Committed] = []

    async def give_up() -> None:
        async with database.batch() as batch:
            opened.append(batch)
            await database.write(insert("lost"), store="t")
            raise RuntimeError("the caller gave up")

    with pytest.raises(RuntimeError):
        await give_up()
    assert not opened[0].committed
    assert await rows(database) == ["before"]
    await database.write(insert("after"), store="t")
    assert await rows(database) == ["after", "before"]
    await database.aclose()


async def test_a_turns_writes_behind_it_are_one_transaction(tmp_path: Path) -> None:
    """Trace, buffer and recall counts of one turn commit together: one COMMIT, all stored."""
    stores = sqlite.open_stores(tmp_path / "turn.db")
    await seed(stores)
    database = stores.traces.database  # type: ignore[attr-defined]
    statements: list[str] = []
    async with orchestrator(stores) as turns:
        await turns.start_turn(demo_request())
        await turns.wait_background()
        database._writer.set_trace_callback(statements.append)
        result = await turns.start_turn(demo_request())
        await turns.wait_background()
        database._writer.set_trace_callback(None)
        stats = turns.write_stats
        tenant = Tenant(agent_id=result.context.agent_id, user_id=result.context.user_id)
        assert await stores.traces.get(tenant, result.context.turn_id) is not None
    await stores.aclose()
    assert statements.count("COMMIT") == 1
    assert sum(s.startswith("SAVEPOINT") for s in statements) >= 3
    assert stats.failed == 0
    # committed without a sync of its own: the end of the turn's exchange syncs it
    assert statements[0] == "PRAGMA synchronous = NORMAL"
    assert statements[-1] == "PRAGMA synchronous = FULL"


def synchronous(database: Database) -> int:
    """The writer's safety level (2: FULL, 1: NORMAL)."""
    assert database._writer is not None
    return int(database._writer.execute("PRAGMA synchronous").fetchone()[0])


async def test_an_unsynced_batch_leaves_the_writer_synced(tmp_path: Path) -> None:
    """``batch(synced=False)`` commits at NORMAL, then every later commit syncs again,
    whether the batch committed or rolled back; a NORMAL database stays NORMAL."""
    database = Database(tmp_path / "batch.db")
    await database.write(insert("before"), store="t")
    statements: list[str] = []
    assert database._writer is not None
    database._writer.set_trace_callback(statements.append)
    async with database.batch(synced=False) as batch:
        await database.write(insert("kept"), store="t")
    assert statements[:2] == ["PRAGMA synchronous = NORMAL", "BEGIN IMMEDIATE"]
    assert statements[-2:] == ["COMMIT", "PRAGMA synchronous = FULL"]
    assert batch.committed and synchronous(database) == 2

    async def give_up() -> None:
        async with database.batch(synced=False):
            await database.write(insert("lost"), store="t")
            raise RuntimeError("the caller gave up")

    with pytest.raises(RuntimeError):
        await give_up()
    assert synchronous(database) == 2
    async with database.batch():
        await database.write(insert("synced"), store="t")
    assert statements[-1] == "COMMIT"
    assert await rows(database) == ["before", "kept", "synced"]
    await database.aclose()

    normal = Database(tmp_path / "normal.db", synchronous="NORMAL")
    await normal.write(insert("before"), store="t")
    async with normal.batch(synced=False):
        await normal.write(insert("kept"), store="t")
    assert synchronous(normal) == 1
    await normal.aclose()


@dataclass
class Uncommitted:
    """A batch that never commits, as when the commit fails."""

    committed: bool = False


@asynccontextmanager
async def failing_commit() -> AsyncIterator[Uncommitted]:
    """A batch whose writes run, then whose commit fails."""
    yield Uncommitted()
    raise StoreError("disk I/O error", store="database")


async def test_writes_of_a_batch_that_did_not_commit_are_counted_failed() -> None:
    """Writes that ran but whose transaction failed to commit are failed, never written."""
    ran: list[str] = []

    def write(kind: str) -> TurnWrite:
        async def call() -> int:
            ran.append(kind)
            return 0

        return TurnWrite(kind, call)

    writes = TurnWrites(WritesConfig(), attempts=1, batch=failing_commit)
    await writes.submit("t1", SESSION, [write("trace"), write("buffer")], inline_limit_s=5)
    assert sorted(ran) == ["buffer", "trace"]
    assert (writes.stats.written, writes.stats.failed) == (0, 2)


def test_only_stores_on_one_database_share_a_batch(tmp_path: Path) -> None:
    """One SQLite set offers its database's batch; a set mixed with in-memory stores none."""
    stores = sqlite.open_stores(tmp_path / "one.db")
    batch = shared_batch([stores.traces, stores.working_memory, stores.episodic])
    assert batch is not None and batch.__self__ is stores.traces.database  # type: ignore[attr-defined]
    mixed = stores.replace(traces=Stores.in_memory().traces)
    assert shared_batch([mixed.traces, mixed.working_memory]) is None


async def test_a_batch_begins_in_its_first_writes_hop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes asked together in a batch take one worker-thread hop with its begin, then one
    for the commit; a batch that writes nothing takes none."""
    database = Database(tmp_path / "batch.db")
    await database.write(insert("before"), store="t")
    hops: list[object] = []
    run_sync = anyio.to_thread.run_sync

    async def counted(fn: Callable[..., object], *args: object, **kwargs: Any) -> object:
        hops.append(fn)
        return await run_sync(fn, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    async with database.batch() as batch, anyio.create_task_group() as group:
        for value in ("one", "two", "three"):
            group.start_soon(partial(database.write, insert(value), store="t"))
    assert batch.committed and len(hops) == 2
    hops.clear()
    async with database.batch() as empty:
        pass
    assert empty.committed and hops == []
    monkeypatch.undo()
    assert await rows(database) == ["before", "one", "three", "two"]
    await database.aclose()


async def test_a_batch_waits_for_another_connections_write_lock(tmp_path: Path) -> None:
    """The first write of a batch begins it once another connection lets go of the file."""
    database = Database(tmp_path / "batch.db")
    await database.write(insert("before"), store="t")
    other = sqlite3.connect(tmp_path / "batch.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")

    async def let_go() -> None:
        await anyio.sleep(0.1)
        other.execute("COMMIT")

    async with anyio.create_task_group() as group:
        group.start_soon(let_go)
        async with database.batch() as batch:
            await database.write(insert("after"), store="t")
    other.close()
    assert batch.committed
    assert await rows(database) == ["after", "before"]
    await database.aclose()


async def test_a_batch_expecting_its_writes_commits_in_the_last_ones_hop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Told how many writes its block makes, a batch begins, writes and commits in one
    worker-thread hop: committed, and its rows readable, before the block ends."""
    database = Database(tmp_path / "batch.db")
    await database.write(insert("before"), store="t")
    statements: list[str] = []
    assert database._writer is not None
    database._writer.set_trace_callback(statements.append)
    hops = counting_hops(monkeypatch)
    async with database.batch(synced=False) as batch:
        batch.expect_writes(3)
        async with anyio.create_task_group() as group:
            for value in ("one", "two", "three"):
                group.start_soon(partial(database.write, insert(value), store="t"))
        assert batch.committed and len(hops) == 1
        assert await rows(database) == ["before", "one", "three", "two"]
    assert statements.count("COMMIT") == 1
    assert statements[-2:] == ["COMMIT", "PRAGMA synchronous = FULL"]
    await database.aclose()


async def test_a_write_after_the_expected_ones_is_a_transaction_of_its_own(
    tmp_path: Path,
) -> None:
    """A write beyond the count, once the batch has committed, commits on its own, synced;
    an error after the commit undoes nothing that committed."""
    database = Database(tmp_path / "batch.db")
    statements: list[str] = []
    await database.write(insert("before"), store="t")
    assert database._writer is not None
    database._writer.set_trace_callback(statements.append)

    async def beyond() -> None:
        async with database.batch(synced=False) as batch:
            batch.expect_writes(1)
            await database.write(insert("expected"), store="t")
            assert batch.committed
            statements.clear()
            await database.write(insert("beyond"), store="t")
            raise RuntimeError("the caller gave up")

    with pytest.raises(RuntimeError):
        await beyond()
    assert statements[0] == "BEGIN IMMEDIATE" and statements[-1] == "COMMIT"
    assert synchronous(database) == 2
    assert await rows(database) == ["before", "beyond", "expected"]
    await database.aclose()


async def test_a_failed_write_leaves_the_commit_to_the_blocks_end(tmp_path: Path) -> None:
    """A write that fails does not count towards the expected ones: the batch commits when the
    block ends, as one never told."""
    database = Database(tmp_path / "batch.db")
    await database.write(insert("before"), store="t")
    async with database.batch() as batch:
        batch.expect_writes(2)
        await database.write(insert("kept"), store="t")
        with pytest.raises(StoreError, match="no such table"):
            await database.write(broken, store="t")
        assert not batch.committed
    assert batch.committed
    assert await rows(database) == ["before", "kept"]
    await database.aclose()


def orphan(connection: sqlite3.Connection) -> None:
    """A write whose row breaks a deferred foreign key: its savepoint succeeds, the commit
    of its transaction fails."""
    connection.execute("INSERT INTO child VALUES (1)")


async def test_a_failed_commit_with_the_last_write_fails_it_and_the_block(
    tmp_path: Path,
) -> None:
    """When the commit made with the last expected write fails, that write raises, so does
    every later write of the block and its end; nothing of the batch is stored."""
    database = Database(tmp_path / "batch.db")

    def tables(connection: sqlite3.Connection) -> None:
        insert("before")(connection)
        connection.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        connection.execute(
            "CREATE TABLE child (parent INTEGER"
            " REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
        )

    await database.write(tables, store="t")
    opened: list[Committed] = []

    async def doomed() -> None:
        async with database.batch(synced=False) as batch:
            opened.append(batch)
            batch.expect_writes(2)
            await database.write(insert("lost"), store="t")
            with pytest.raises(StoreError, match="FOREIGN KEY"):
                await database.write(orphan, store="t")
            with pytest.raises(StoreError, match="did not commit"):
                await database.write(insert("later"), store="t")

    with pytest.raises(StoreError, match="did not commit"):
        await doomed()
    assert not opened[0].committed
    assert synchronous(database) == 2
    assert await rows(database) == ["before"]
    await database.write(insert("after"), store="t")
    assert await rows(database) == ["after", "before"]
    await database.aclose()


async def test_a_turns_writes_behind_it_take_one_hop_with_their_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn's trace, buffer and recall counts begin, write and commit in one hop."""
    stores = sqlite.open_stores(tmp_path / "turn.db")
    await seed(stores)
    async with orchestrator(stores) as turns:
        await turns.start_turn(demo_request())
        await turns.wait_background()
        result = await turns.start_turn(demo_request())
        hops = counting_hops(monkeypatch)
        await turns.wait_background()
        monkeypatch.undo()
        assert turns.write_stats.failed == 0 and turns.write_stats.written >= 6
        tenant = Tenant(agent_id=result.context.agent_id, user_id=result.context.user_id)
        assert await stores.traces.get(tenant, result.context.turn_id) is not None
    await stores.aclose()
    assert len(hops) == 1
