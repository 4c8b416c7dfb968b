"""The durable backends answer ``around`` through indexes, never by scanning the items table.

Each test fills a store with enough items (20 per thread, of one agent and
user, as an agent's sessions are) that a scan would be the planner's worst
choice, has the database gather statistics, then reads the plan of the
statement the store runs.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from prefrontal.stores.postgres import PostgresDatabase, PostgresMemoryStore
from prefrontal.stores.postgres.memory_sql import Statements as PostgresStatements
from prefrontal.stores.sqlite import Database, SqliteMemoryStore
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.memory_sql import Statements as SqliteStatements
from prefrontal.stores.tenancy import Tenant
from prefrontal.testing.synthetic import memories
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio

TENANT = Tenant(agent_id="agent-1", user_id="alice")
ITEMS = 2_000
ANCHORS = ["m0000041", "m0001000", "m0001999"]
"""Positions 1, 0 and 19 of threads "session-2", "session-50" and "session-99"."""


async def test_sqlite_around_reads_only_the_neighbours(tmp_path: Path) -> None:
    """SQLite's ``around`` finds anchors by their key and neighbours by thread position,
    scanning no table (not the agent's threaded items from ``thread_id > NULL`` on)."""
    database = Database(tmp_path / "plans.db")
    store = SqliteMemoryStore(database, "episodic")
    await store.put_many(list(memories(ITEMS, tenant=TENANT)))
    got = await store.around(TENANT, ANCHORS, radius=2, now=FIXED_NOW)
    assert [item.item_id for item in got] == [
        "m0000040", "m0000042", "m0000043",
        "m0001001", "m0001002",
        "m0001997", "m0001998",
    ]  # fmt: skip
    await database.aclose()
    connection = sqlite3.connect(tmp_path / "plans.db")  # no ANALYZE: the store never runs it
    params = {"agent": "agent-1", "user": "alice", "ids": '["m0001000"]', "radius": 2, "now": 0}
    sql = SqliteStatements("episodic").around
    plan = [row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    connection.close()
    scans = [step for step in plan if step.startswith("SCAN") and "episodic_items" in step]
    assert scans == [], plan
    assert not any(step.startswith("SEARCH m USING INDEX") for step in plan), plan
    assert "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)" in plan
    anchors = [step for step in plan if step.startswith("SEARCH a ")]
    assert anchors == [
        "SEARCH a USING INDEX sqlite_autoindex_episodic_items_1 (agent_id=? AND item_id=?)"
    ], plan


@pytest.fixture
async def database(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema, max_size=2)
    yield database
    await database.aclose()


async def test_postgres_around_reads_only_the_neighbours(database: PostgresDatabase) -> None:
    """PostgreSQL's ``around`` plan reaches items through indexes only, with no sequential scan."""
    store = PostgresMemoryStore(database, "episodic")
    await store.put_many(list(memories(ITEMS, tenant=TENANT)))
    got = await store.around(TENANT, ANCHORS, radius=1, now=FIXED_NOW)
    assert [item.item_id for item in got] == [
        "m0000040", "m0000042", "m0001001", "m0001998",
    ]  # fmt: skip

    async def explain(connection: Any) -> list[str]:
        await connection.execute("ANALYZE episodic_items")
        params = ("agent-1", "alice", FIXED_NOW, ["m0001000"], 2)
        rows = await connection.fetch(f"EXPLAIN {PostgresStatements('episodic').around}", *params)
        return [row[0] for row in rows]

    plan = await database.write(explain, store="test")
    assert not any("Seq Scan" in line for line in plan), "\n".join(plan)
    assert any("episodic_thread" in line for line in plan), "\n".join(plan)


def _rows_read(node: dict[str, Any], table: str) -> int:
    """Rows the plan node and its children read from ``table`` (rows times loops)."""
    own = 0
    if node.get("Relation Name") == table:
        own = int(node["Actual Rows"] * node["Actual Loops"])
    return own + sum(_rows_read(child, table) for child in node.get("Plans", []))


async def test_postgres_around_stays_with_the_anchors_on_stale_statistics(
    database: PostgresDatabase,
) -> None:
    """Statistics gathered on a nearly empty table never turn ``around`` into a walk of every item.

    A server's tables grow from nothing much faster than autovacuum
    analyses them, and a prepared statement runs a generic plan: the
    neighbours are still read per anchor, a handful of rows.
    """
    store = PostgresMemoryStore(database, "episodic")
    await store.put_many(list(memories(20, tenant=TENANT, prefix="early")))

    async def analyse(connection: Any) -> None:
        await connection.execute("ANALYZE episodic_items")

    await database.write(analyse, store="test")
    await store.put_many(list(memories(ITEMS, tenant=TENANT)))

    async def explain(connection: Any) -> dict[str, Any]:
        await connection.execute("SET plan_cache_mode = force_generic_plan")
        params = ("agent-1", "alice", FIXED_NOW, ANCHORS, 2)
        sql = f"EXPLAIN (ANALYZE, FORMAT JSON) {PostgresStatements('episodic').around}"
        document = await connection.fetchval(sql, *params)
        plan: dict[str, Any] = json.loads(document)[0]["Plan"]
        return plan

    plan = await database.write(explain, store="test")
    assert _rows_read(plan, "episodic_items") < 50, json.dumps(plan, indent=1)
