"""Group commit: writes that queue while one commits share a transaction, each all or nothing."""

from __future__ import annotations

import sqlite3
import threading
from functools import partial
from pathlib import Path

import anyio
import pytest

from prefrontal.stores.sqlite import Database
from prefrontal.stores.sqlite.group_commit import Batch, GroupCommit, Write

pytestmark = pytest.mark.anyio


def _insert(value: int, *, fail: bool = False, hold: threading.Event | None = None):  # type: ignore[no-untyped-def]
    def run(connection: sqlite3.Connection) -> int:
        connection.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
        connection.execute("INSERT INTO t (x) VALUES (?)", (value,))
        if hold is not None:
            hold.wait(5)
        if fail:
            raise ValueError(f"write {value} refused")
        return value

    return run


def _constant(value: int, connection: sqlite3.Connection | None) -> int:
    return value


async def _values(database: Database) -> list[int]:
    def read(connection: sqlite3.Connection) -> list[int]:
        return [row[0] for row in connection.execute("SELECT x FROM t ORDER BY x")]

    return await database.read(read, store="test")


async def test_writes_queued_while_one_runs_go_in_one_batch_in_their_order() -> None:
    """While the first batch runs, the writes that arrive form the next batch, in order."""
    group = GroupCommit()
    batches: list[list[int]] = []
    first_running = anyio.Event()
    release = anyio.Event()

    async def run(batch: Batch, started: float) -> bool:
        batches.append([write.fn(None) for write in batch])  # type: ignore[arg-type]
        if len(batches) == 1:
            first_running.set()
            await release.wait()
        for write in batch:
            write.succeed(write.fn(None))  # type: ignore[arg-type]
        return True

    results: dict[int, int] = {}

    async def one(n: int) -> None:
        results[n] = await group.write(Write(partial(_constant, n), "test"), run)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, 0)
        await first_running.wait()
        for n in range(1, 6):
            tg.start_soon(one, n)
        await anyio.sleep(0.05)
        release.set()
    assert batches == [[0], [1, 2, 3, 4, 5]]
    assert results == {n: n for n in range(6)}


async def test_a_failing_write_rolls_back_alone_and_its_caller_gets_its_error(
    tmp_path: Path,
) -> None:
    """Of writes committed together, the one that raises leaves nothing; the others are there."""
    database = Database(tmp_path / "g.db")
    hold = threading.Event()
    errors: list[BaseException] = []

    async def one(n: int) -> None:
        try:
            await database.write(_insert(n, fail=n == 3, hold=hold if n == 0 else None), store="t")
        except ValueError as error:
            errors.append(error)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, 0)
            await anyio.sleep(0.05)
            for n in range(1, 6):
                tg.start_soon(one, n)
            await anyio.sleep(0.05)
            hold.set()
        assert [str(e) for e in errors] == ["write 3 refused"]
        assert await _values(database) == [0, 1, 2, 4, 5]
    finally:
        await database.aclose()


async def test_a_write_cancelled_while_queued_never_runs(tmp_path: Path) -> None:
    """A caller that gives up before its write's batch starts leaves nothing written."""
    database = Database(tmp_path / "c.db")
    hold = threading.Event()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(database.write, _insert(1, hold=hold), store="t"))
            await anyio.sleep(0.05)
            with anyio.move_on_after(0.05) as scope:
                await database.write(_insert(2), store="t")
            hold.set()
        assert scope.cancelled_caught
        assert await _values(database) == [1]
    finally:
        await database.aclose()


async def test_a_write_cancelled_while_running_is_committed_before_the_cancellation(
    tmp_path: Path,
) -> None:
    """Once its batch runs, a caller whose deadline passes still waits for the commit."""
    database = Database(tmp_path / "r.db")
    hold = threading.Event()
    try:
        await database.write(_insert(0), store="t")
        threading.Timer(0.2, hold.set).start()
        with anyio.move_on_after(0.05) as scope:
            await database.write(_insert(1, hold=hold), store="t")
        assert scope.cancel_called
        assert await _values(database) == [0, 1]
    finally:
        await database.aclose()
