"""Quick reads (``Database.read(..., quick=True)``): on the event loop's thread when their
connection is free at once, in a worker thread otherwise, with the same result, error,
context and cancellation either way."""

from __future__ import annotations

import contextvars
import threading
from functools import partial
from pathlib import Path

import anyio
import pytest

from prefrontal.errors import StoreError
from prefrontal.stores import SessionKey, SessionState, sqlite
from prefrontal.stores.sqlite import Database, decoded
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.working_memory import QUICK_BYTES
from tests.stores.test_sqlite_gathered import counting_hops

pytestmark = pytest.mark.anyio
WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


FIVE = [0, 1, 2, 3, 4]
"""The numbers of the table :func:`_database` makes."""


def _numbers(connection: sqlite3.Connection) -> list[int]:
    return [n for (n,) in connection.execute("SELECT n FROM numbers ORDER BY n")]


async def _database(path: Path) -> Database:
    """An opened database with a table of five numbers."""
    database = Database(path)

    def made(connection: sqlite3.Connection) -> None:
        connection.execute("CREATE TABLE numbers (n INTEGER PRIMARY KEY)")
        connection.executemany("INSERT INTO numbers VALUES (?)", [(n,) for n in range(5)])

    await database.write(made, store="t")
    await database.open()
    return database


async def test_a_quick_read_runs_on_the_loops_thread_with_the_callers_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No hop: the read runs in the calling thread, sees the caller's context variables, and
    returns what the same read in a worker thread returns; its connection is read-only."""
    database = await _database(tmp_path / "q.db")
    slow = await database.read(_numbers, store="t", one_statement=True)
    hops = counting_hops(monkeypatch)
    seen: list[tuple[int, str]] = []

    def read(connection: sqlite3.Connection) -> list[int]:
        seen.append((threading.get_ident(), WHO.get()))
        return _numbers(connection)

    WHO.set("caller")
    assert await database.read(read, store="t", one_statement=True, quick=True) == slow
    assert await database.read(read, store="t", quick=True) == slow  # in BEGIN … COMMIT
    assert hops == []
    assert seen == [(threading.get_ident(), "caller")] * 2

    def write(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO numbers VALUES (99)")

    with pytest.raises(StoreError, match="readonly"):
        await database.read(write, store="t", quick=True)
    await database.aclose()


async def test_a_quick_read_hops_when_its_connection_is_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another loop's quick read holds the connection, the read runs in a worker thread
    (never waiting for it on the loop) and returns the same."""
    database = await _database(tmp_path / "busy.db")
    hops = counting_hops(monkeypatch)
    threads: list[int] = []

    def read(connection: sqlite3.Connection) -> list[int]:
        threads.append(threading.get_ident())
        return _numbers(connection)

    with database._on_loop_lock:  # another loop's read, in its own thread, holds it
        assert await database.read(read, store="t", one_statement=True, quick=True) == FIVE
    assert len(hops) == 1 and threads[0] != threading.get_ident()
    await database.aclose()


async def test_a_failed_quick_read_fails_its_caller_and_the_connection_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quick read that raises reaches its caller as a :class:`StoreError`; its connection
    (maybe in an unfinished statement's snapshot) is closed, the next quick read runs in a
    worker thread that opens another, and the one after runs on the loop again."""
    database = await _database(tmp_path / "fail.db")
    first = database._on_loop
    hops = counting_hops(monkeypatch)

    def broken(connection: sqlite3.Connection) -> object:
        cursor = connection.execute("SELECT n FROM numbers")
        cursor.fetchone()  # the statement left unfinished
        return connection.execute("SELECT * FROM nowhere").fetchall()

    with pytest.raises(StoreError, match="nowhere"):
        await database.read(broken, store="t", one_statement=True, quick=True)
    assert database._on_loop is None and hops == []
    assert await database.read(_numbers, store="t", one_statement=True, quick=True) == FIVE
    assert len(hops) == 1 and database._on_loop not in (None, first)
    assert await database.read(_numbers, store="t", one_statement=True, quick=True) == FIVE
    assert len(hops) == 1
    await database.aclose()


async def test_a_quick_read_that_finds_the_file_busy_runs_in_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Busy on the loop (its connection never waits for a lock), the read runs again in a
    worker thread, where lock waits are sliced, and its caller gets that run's result."""
    database = await _database(tmp_path / "locked.db")
    hops = counting_hops(monkeypatch)
    runs: list[int] = []

    def read(connection: sqlite3.Connection) -> list[int]:
        runs.append(threading.get_ident())
        if len(runs) == 1:
            raise sqlite3.OperationalError("database is locked")
        return _numbers(connection)

    assert await database.read(read, store="t", one_statement=True, quick=True) == FIVE
    assert runs[0] == threading.get_ident() != runs[1] and len(hops) == 1
    await database.aclose()


async def test_a_cancelled_quick_read_never_runs(tmp_path: Path) -> None:
    """A caller cancelled before its quick read begins gets its cancellation; the read never
    runs."""
    database = await _database(tmp_path / "cancelled.db")
    ran: list[int] = []

    def read(connection: sqlite3.Connection) -> list[int]:
        ran.append(1)
        return _numbers(connection)

    with anyio.CancelScope() as scope:
        scope.cancel()
        await database.read(read, store="t", quick=True)
    assert scope.cancelled_caught and ran == []
    await database.aclose()


async def test_quick_reads_of_a_closed_database_raise(tmp_path: Path) -> None:
    """Once closed, a quick read raises as any read does; its connection is closed too."""
    database = await _database(tmp_path / "closed.db")
    connection = database._on_loop
    assert connection is not None
    await database.aclose()
    assert database._on_loop is None
    with pytest.raises(sqlite3.ProgrammingError):
        connection.execute("SELECT 1")
    with pytest.raises(StoreError, match="closed"):
        await database.read(_numbers, store="t", quick=True)


async def test_a_database_used_without_opening_opens_the_connection_in_a_hop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never opened: the first quick read runs in a worker thread that also opens the
    connection of quick reads; the next runs on the loop."""
    database = Database(tmp_path / "lazy.db")
    await database.write(
        lambda c: c.execute("CREATE TABLE numbers (n INTEGER PRIMARY KEY)"), store="t"
    )
    hops = counting_hops(monkeypatch)
    assert await database.read(_numbers, store="t", quick=True) == []
    assert len(hops) == 1 and database._on_loop is not None
    assert await database.read(_numbers, store="t", quick=True) == []
    assert len(hops) == 1
    await database.aclose()


async def test_a_sessions_load_is_quick_only_while_its_state_is_held_and_small(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load after its session's save runs on the loop; a state of more than
    ``QUICK_BYTES``, or one not held, loads in a worker thread; a session never saved is
    found missing on the loop; each load equals the state."""
    stores = sqlite.open_stores(tmp_path / "wm.db")
    await stores.open()
    small = SessionKey(agent_id="a", user_id="u", session_id="small")
    large = SessionKey(agent_id="a", user_id="u", session_id="large")
    saved_small = await stores.working_memory.save(SessionState(key=small, state={"n": 1}))
    blob = {"blob": "x" * (QUICK_BYTES + 1)}
    saved_large = await stores.working_memory.save(SessionState(key=large, state=blob))
    hops = counting_hops(monkeypatch)
    assert await stores.working_memory.load(small) == saved_small
    assert hops == []
    assert await stores.working_memory.load(large) == saved_large
    assert len(hops) == 1
    stranger = SessionKey(agent_id="a", user_id="u", session_id="never")
    assert await stores.working_memory.load(stranger) is None
    assert len(hops) == 1
    decoded.session_states.clear()
    assert await stores.working_memory.load(small) == saved_small
    assert len(hops) == 2
    await stores.aclose()


async def test_quick_reads_of_two_loops_at_once_each_get_their_own_result(
    tmp_path: Path,
) -> None:
    """Two event loops in two threads reading quickly at once share the connection (one
    at a time, the other in a worker thread): every read returns its own numbers."""
    database = await _database(tmp_path / "two.db")
    results: dict[int, list[list[int]]] = {}

    async def reads(number: int) -> None:
        results[number] = [
            await database.read(
                partial(lambda below, c: _numbers(c)[:below], n % 5),
                store="t",
                one_statement=True,
                quick=True,
            )
            for n in range(200)
        ]

    threads = [threading.Thread(target=anyio.run, args=(reads, k)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {k: [list(range(n % 5)) for n in range(200)] for k in range(2)}
    await database.aclose()


async def test_a_quick_read_after_write_runs_on_the_writer_on_the_loops_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``after_write``, a quick read runs on the writer in the calling thread when no
    write holds it, seeing the write just committed; while a write holds it, on a read
    connection in a worker thread. The writer's lock wait is back to its slice after."""
    database = await _database(tmp_path / "after.db")
    await database.write(lambda c: c.execute("INSERT INTO numbers VALUES (5)"), store="t")
    hops = counting_hops(monkeypatch)
    used: list[tuple[sqlite3.Connection, int]] = []

    def read(connection: sqlite3.Connection) -> list[int]:
        used.append((connection, threading.get_ident()))
        return _numbers(connection)

    assert await database.read(read, store="t", after_write=True, quick=True) == [*FIVE, 5]
    assert hops == [] and used[-1] == (database._writer, threading.get_ident())
    with database._writer_lock:  # a write of another loop holds the writer
        assert await database.read(read, store="t", after_write=True, quick=True) == [*FIVE, 5]
    assert len(hops) == 1 and used[-1][0] is not database._writer
    assert used[-1][1] != threading.get_ident()
    writer = database._writer
    assert writer is not None
    assert writer.execute("PRAGMA busy_timeout").fetchone()[0] == 20
    await database.aclose()
