"""Reads marked ``one_statement``: no ``BEGIN``/``COMMIT``, still one fresh snapshot each."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, seed
from prefrontal.errors import StoreError
from prefrontal.stores import SessionKey, Tenant, sqlite
from prefrontal.stores.sqlite import Database, SqliteMemoryStore
from prefrontal.stores.sqlite.driver import sqlite3
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio


def _table(connection: sqlite3.Connection) -> None:
    connection.execute("CREATE TABLE IF NOT EXISTS numbers (n INTEGER PRIMARY KEY, v INTEGER)")
    connection.execute("DELETE FROM numbers")
    connection.executemany("INSERT INTO numbers VALUES (?, ?)", [(n, n) for n in range(20)])


def _first_value(connection: sqlite3.Connection) -> int:
    """One statement, its cursor left with rows unread when it returns."""
    return int(connection.execute("SELECT v FROM numbers ORDER BY n").fetchone()[0])


def _moved(by: int, connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE numbers SET v = n + ?", (by,))


def _traced(
    statements: list[str], fn: Callable[[sqlite3.Connection], Any]
) -> Callable[[sqlite3.Connection], Any]:
    def run(connection: sqlite3.Connection) -> Any:
        connection.set_trace_callback(statements.append)
        try:
            return fn(connection)
        finally:
            connection.set_trace_callback(None)

    return run


async def test_a_one_statement_read_runs_its_statement_alone(tmp_path: Path) -> None:
    """The marked read sends its one statement outside any transaction; the default read
    runs inside one (``BEGIN`` … ``COMMIT``)."""
    database = Database(tmp_path / "one.db", pool_size=1)
    await database.write(_table, store="test")
    alone: list[str] = []
    first = await database.read(_traced(alone, _first_value), store="test", one_statement=True)
    second = await database.read(_first_value, store="test")
    inside = [
        await database.read(_in_transaction, store="test", one_statement=one)
        for one in (True, False)
    ]
    await database.aclose()
    assert first == second == 0
    assert alone == ["SELECT v FROM numbers ORDER BY n"]
    assert inside == [False, True]


def _in_transaction(connection: sqlite3.Connection) -> bool:
    connection.execute("SELECT 1").fetchall()
    return connection.in_transaction


async def test_each_one_statement_read_sees_the_writes_before_it(tmp_path: Path) -> None:
    """A statement left with rows unread ends with its cursor: the pooled connection's next
    read takes a fresh snapshot, seeing every write committed in between."""
    database = Database(tmp_path / "fresh.db", pool_size=1)
    await database.write(_table, store="test")
    seen: list[int] = []
    for step in range(1, 4):
        seen.append(await database.read(_first_value, store="test", one_statement=True))
        await database.write(partial(_moved, 100 * step), store="test")
    seen.append(await database.read(_first_value, store="test", one_statement=True))
    seen.append(await database.read(_first_value, store="test"))
    await database.aclose()
    assert seen == [0, 100, 200, 300, 300]


async def test_a_one_statement_read_that_raised_leaves_no_snapshot_behind(
    tmp_path: Path,
) -> None:
    """A read that raised with its statement unfinished (the cursor kept by the traceback):
    its connection is not pooled again, so the next reads see later writes."""
    database = Database(tmp_path / "raised.db", pool_size=1)
    await database.write(_table, store="test")
    kept: list[BaseException] = []

    def failing(connection: sqlite3.Connection) -> None:
        cursor = connection.execute("SELECT v FROM numbers ORDER BY n")
        cursor.fetchone()
        raise sqlite3.DatabaseError("a row that does not decode")

    with pytest.raises(StoreError) as raised:
        await database.read(failing, store="test", one_statement=True)
    kept.append(raised.value)  # its traceback holds the frame, the frame the cursor
    await database.write(lambda c: c.execute("UPDATE numbers SET v = v + 1000"), store="test")
    after = await database.read(_first_value, store="test", one_statement=True)
    inside = await database.read(_first_value, store="test")
    await database.aclose()
    assert (after, inside) == (1000, 1000)


async def test_every_read_a_turn_marks_one_statement_runs_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stores' promise checked over demo turns (start, end, background work) and the
    listings: each read marked ``one_statement`` sends exactly one statement, and returns
    what it returns in a transaction."""
    counts: list[tuple[str, int]] = []
    read_in = Database._read_in

    def checked(
        self: Database,
        connection: sqlite3.Connection,
        fn: Callable[[sqlite3.Connection], Any],
        store: str,
        one: bool,
    ) -> Any:
        if not one:
            return read_in(self, connection, fn, store, one)
        statements: list[str] = []
        result = read_in(self, connection, _traced(statements, fn), store, True)
        counts.append((store, len(statements)))
        assert read_in(self, connection, fn, store, False) == result
        return result

    monkeypatch.setattr(Database, "_read_in", checked)
    stores = sqlite.open_stores(tmp_path / "turns.db")
    await seed(stores)
    turns = orchestrator(stores)
    for number in range(3):
        result = await turns.start_turn(demo_request())
        await turns.end_turn(result, f"Answer {number}.")
        await turns.wait_background()
    tenant = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
    episodic = stores.episodic
    assert isinstance(episodic, SqliteMemoryStore)
    listed = await episodic.listed(tenant, limit=5)
    await episodic.versions(tenant, listed[0].item_id)
    await stores.working_memory.sessions(DEMO_AGENT)
    await stores.session_items.items(
        SessionKey(agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=DEMO_SESSION)
    )
    await stores.aclose()
    assert len(counts) > 10
    assert {"episodic", "working_memory", "session_items"} <= {store for store, _ in counts}
    assert {count for _, count in counts} == {1}, counts
