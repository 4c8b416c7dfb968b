"""A scan of every table after erase, forget and update: no row of the user, no word of theirs.

On SQLite and PostgreSQL, two users write memories and turns with words of
their own; one is erased, and of the other one memory is forgotten and one
rewritten. Every table with a ``user_id`` column then holds no row of the
erased user, the term statistics hold no word of the erased user, of
the forgotten memory, nor of the rewritten memory's old text, and the
traces' search index no word of the erased user's turns.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.stores import Tenant, postgres, sqlite
from prefrontal.stores.sqlite.driver import sqlite3

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE = Tenant(agent_id="atlas", user_id="alice")
BOB = Tenant(agent_id="atlas", user_id="bob")
GONE = ("alicewordq", "forgotwordq", "oldwordq")


async def fill_and_remove(stores: Stores) -> None:
    async with Orchestrator(stores, clock=lambda: T0) as orchestrator:
        memory = orchestrator.memory
        for n in range(5):
            await memory.remember(ALICE, f"alicewordq note {n}", store="episodic")
            await memory.remember(BOB, f"bobwordq note {n}")
        forgotten = await memory.remember(BOB, "forgotwordq secret")
        rewritten = await memory.remember(BOB, "oldwordq plan")
        for tenant in (ALICE, BOB):
            result = await orchestrator.start_turn(
                TurnRequest(
                    agent_id="atlas",
                    user_id=tenant.user_id,
                    session_id="s1",
                    user_input=f"{tenant.user_id}wordq asks",
                )
            )
            await orchestrator.end_turn(result, "Noted.")
        await memory.erase("atlas", "alice")
        assert await memory.forget(BOB, forgotten.item_id)
        await memory.update(BOB, rewritten.item_id, content="newwordq plan")


def sqlite_scan(path: Path) -> tuple[dict[str, int], list[str]]:
    """Rows of the erased user per table with a ``user_id``; the memory stores' terms."""
    with sqlite3.connect(path) as connection:
        tables = [
            r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        rows = {}
        for table in tables:
            columns = [c[1] for c in connection.execute(f"PRAGMA table_info({table})")]
            if "user_id" in columns:
                query = f"SELECT count(*) FROM {table} WHERE user_id = 'alice'"
                rows[table] = connection.execute(query).fetchone()[0]
        terms = [
            r[0]
            for name in ("episodic", "semantic")
            for r in connection.execute(f"SELECT term FROM {name}_terms")
        ]
    return rows, terms


def trace_words(path: Path) -> set[str]:
    """The words the traces' search index holds."""
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE VIRTUAL TABLE temp.said USING fts5vocab(main, traces_fts, row)")
        return {r[0] for r in connection.execute("SELECT term FROM temp.said")}


async def test_sqlite_tables_hold_nothing_of_the_user(tmp_path: Path) -> None:
    """No ``user_id`` row of the erased user but its erasure record; no removed word in the
    term statistics nor in the traces' search index."""
    path = tmp_path / "stores.db"
    await fill_and_remove(sqlite.open_stores(path))
    rows, terms = sqlite_scan(path)
    assert rows.pop("erased_tenants") == 1  # the erasure record: ids and a time, no text
    assert rows and set(rows.values()) == {0}
    assert [t for t in terms if t in GONE] == []
    assert {"bobwordq", "newwordq"} <= set(terms)
    said = trace_words(path)
    assert "alicewordq" not in said and {"bobwordq", "noted"} <= said


async def test_postgres_tables_hold_nothing_of_the_user(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """The same scan on PostgreSQL: live tables, the statistics and the traces' words."""
    await fill_and_remove(postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=4))
    connection = await asyncpg.connect(postgres_dsn)
    try:
        tables = await connection.fetch(
            "SELECT table_name FROM information_schema.columns "
            "WHERE table_schema = $1 AND column_name = 'user_id'",
            postgres_schema,
        )
        rows = {
            t["table_name"]: await connection.fetchval(
                f'SELECT count(*) FROM "{postgres_schema}"."{t["table_name"]}" '
                "WHERE user_id = 'alice'"
            )
            for t in tables
        }
        terms = [
            r["term"]
            for name in ("episodic", "semantic")
            for r in await connection.fetch(f'SELECT term FROM "{postgres_schema}".{name}_terms')
        ]
        said = {
            r["word"]
            for r in await connection.fetch(
                f'SELECT word FROM ts_stat($$SELECT words FROM "{postgres_schema}".traces$$)'
            )
        }
    finally:
        await connection.close()
    assert rows.pop("erased_tenants") == 1  # the erasure record: ids and a time, no text
    assert rows and set(rows.values()) == {0}
    assert [t for t in terms if t in GONE] == []
    assert {"bobwordq", "newwordq"} <= set(terms)
    assert "alicewordq" not in said and {"bobwordq", "noted"} <= said
