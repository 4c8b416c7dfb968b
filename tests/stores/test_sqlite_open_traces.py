"""The SQLite trace store learns that a trace is open from an index, without reading its body."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefrontal.stores import Tenant, sqlite
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.migrations import LATEST, migrate, schema_version
from prefrontal.stores.sqlite.open_traces import OPEN_SQL
from prefrontal.stores.sqlite.traces import SqliteTraceStore
from prefrontal.stores.traces import OPEN_SUFFIX
from prefrontal.traces.models import TurnEnding, TurnTrace
from tests.conftest import FIXED_NOW
from tests.unit.traces.helpers import small_trace

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="atlas", user_id="maya")
OTHER = Tenant(agent_id="atlas", user_id="sam")


def trace(turn_id: str, *, ended: bool = False) -> TurnTrace:
    """Maya's trace of ``turn_id``, open or ended, its input holding the open suffix."""
    ending = TurnEnding(reply=f"Not {OPEN_SUFFIX}", ended_at=FIXED_NOW) if ended else None
    return small_trace(turn_id, 1, user_input=f"Is {OPEN_SUFFIX} a suffix?", ending=ending)


async def ended(store: SqliteTraceStore, tenant: Tenant, turn_id: str) -> bool:
    return await store.database.read(lambda c: store.ended_in(c, tenant, turn_id), store="x")


def test_the_open_check_reads_the_index_alone(tmp_path: Path) -> None:
    """The plan of the check is a search of the covering index: no row of ``traces`` is read."""
    connection = sqlite3.connect(tmp_path / "plan.db")
    migrate(connection)
    plan = connection.execute(f"EXPLAIN QUERY PLAN {OPEN_SQL}", ("t", "a", "u")).fetchall()
    connection.close()
    assert [row[-1] for row in plan] == [
        "SEARCH traces USING COVERING INDEX traces_open (turn_id=? AND agent_id=? AND user_id=?)"
    ]


async def test_open_ended_missing_and_another_tenants(tmp_path: Path) -> None:
    """Open is not ended, ended is, a missing trace or another tenant's is not; a put that ends
    a trace moves its row of the index."""
    stores = sqlite.open_stores(tmp_path / "t.db")
    store = stores.traces
    assert isinstance(store, SqliteTraceStore)
    try:
        await store.put(trace("t1"))
        await store.put(trace("t2", ended=True))
        assert not await ended(store, TENANT, "t1")
        assert await ended(store, TENANT, "t2")
        assert not await ended(store, TENANT, "t3")
        assert not await ended(store, OTHER, "t2")
        await store.put(trace("t1", ended=True))
        assert await ended(store, TENANT, "t1")
    finally:
        await stores.aclose()


async def test_a_file_of_schema_17_gets_the_index(tmp_path: Path) -> None:
    """Migration 18 indexes the traces a file holds already."""
    path = tmp_path / "old.db"
    stores = sqlite.open_stores(path)
    assert isinstance(stores.traces, SqliteTraceStore)
    await stores.traces.put(trace("t1", ended=True))
    await stores.traces.put(trace("t2"))
    await stores.aclose()
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("DROP INDEX traces_open")
    connection.execute("PRAGMA user_version = 17")
    connection.close()

    reopened = sqlite.open_stores(path)
    store = reopened.traces
    assert isinstance(store, SqliteTraceStore)
    try:
        assert await ended(store, TENANT, "t1")
        assert not await ended(store, TENANT, "t2")
    finally:
        await reopened.aclose()
    connection = sqlite3.connect(path)
    assert schema_version(connection) == LATEST
    connection.close()
