"""Reads marked ``after_write``: on the writer connection when it is free, never waiting for
it, and never staler than a read connection's (every commit made before the read began)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio
import pytest

from prefrontal.demo import seed
from prefrontal.stores import sqlite
from prefrontal.stores.sqlite import Database
from prefrontal.stores.sqlite.driver import sqlite3
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio


def _table(connection: sqlite3.Connection) -> None:
    connection.execute("CREATE TABLE IF NOT EXISTS numbers (n INTEGER PRIMARY KEY)")


def _added(n: int, connection: sqlite3.Connection) -> None:
    connection.execute("INSERT INTO numbers VALUES (?)", (n,))


def _numbers(connection: sqlite3.Connection) -> list[int]:
    return [n for (n,) in connection.execute("SELECT n FROM numbers ORDER BY n")]


async def test_a_read_after_write_sees_every_commit_made_before_it(tmp_path: Path) -> None:
    """Commits of this database's writer and of another connection to the file (another
    process's, as far as SQLite knows) alternate; each read after them sees all of them."""
    here, elsewhere = Database(tmp_path / "a.db"), Database(tmp_path / "a.db")
    await here.write(_table, store="t")
    expected: list[int] = []
    for n in range(12):
        writer = here if n % 3 else elsewhere
        await writer.write(partial(_added, n), store="t")
        expected.append(n)
        assert await here.read(_numbers, store="t", after_write=True) == expected
        assert await here.read(_numbers, store="t") == expected
    await here.aclose()
    await elsewhere.aclose()


async def test_a_read_after_write_runs_on_the_writer_when_it_is_free(tmp_path: Path) -> None:
    """Free, the writer runs it (its cache is the one a commit of its own leaves warm)."""
    database = Database(tmp_path / "b.db")
    await database.write(_table, store="t")
    used: list[sqlite3.Connection] = []

    def seen(connection: sqlite3.Connection) -> list[int]:
        used.append(connection)
        return _numbers(connection)

    await database.read(seen, store="t", after_write=True)
    await database.read(seen, store="t")
    assert used[0] is database._writer
    assert used[1] is not database._writer
    assert database._writer is not None and not database._writer.in_transaction
    await database.aclose()


async def test_a_read_after_write_does_not_wait_for_a_batch_nor_see_its_writes(
    tmp_path: Path,
) -> None:
    """While a batch holds the writer, the read runs on a read connection at once and sees
    what was committed, not the batch's writes."""
    database = Database(tmp_path / "c.db")
    await database.write(_table, store="t")
    await database.write(lambda c: _added(1, c), store="t")
    seen: list[list[int]] = []
    async with database.batch() as batch:
        await database.write(lambda c: _added(2, c), store="t")
        assert batch.connection is not None  # begun: the writer lock is held
        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:  # another task: not in the batch

                async def read() -> None:
                    seen.append(await database.read(_numbers, store="t", after_write=True))

                group.start_soon(read)
    assert seen == [[1]]
    assert await database.read(_numbers, store="t", after_write=True) == [1, 2]
    await database.aclose()


async def test_a_read_after_write_that_fails_leaves_the_writer_usable(tmp_path: Path) -> None:
    """A read that raises on the writer is rolled back: the next write and read go on."""
    database = Database(tmp_path / "d.db")
    await database.write(_table, store="t")

    def broken(connection: sqlite3.Connection) -> None:
        connection.execute("SELECT n FROM numbers").fetchone()
        raise ValueError("broken read")

    with pytest.raises(ValueError, match="broken read"):
        await database.read(broken, store="t", after_write=True)
    await database.write(lambda c: _added(3, c), store="t")
    assert await database.read(_numbers, store="t", after_write=True) == [3]
    await database.aclose()


async def test_a_turn_ends_alike_with_its_prior_read_after_its_writes(tmp_path: Path) -> None:
    """The exchange's prior read (after the turn's own writes) finds the open trace: the
    turn ends, written, and a second end writes nothing."""
    stores = sqlite.open_stores(tmp_path / "turn.db")
    await seed(stores)
    async with orchestrator(stores) as running:
        result = await running.start_turn(demo_request())
        ended = await running.end_turn(result, "Lena signs it off on Friday.")
        again = await running.end_turn(result, "Lena signs it off on Friday.")
    assert ended.written and not again.written
    await stores.aclose()
