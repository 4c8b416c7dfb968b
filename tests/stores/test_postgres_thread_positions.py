"""A thread's last position is read after its lock is taken, in one call (schema 22).

``<name>_thread_last`` takes the thread's advisory lock, then reads the
thread's highest position: a writer that calls it while another holds the
lock waits, then sees what the other committed (the read's snapshot is
taken after the lock, as a read sent after the lock would be). A schema at
version 21 is upgraded to it with its items, whose positions it then reads;
one at 23 to schema 24's read down the thread index, which reads the same positions.
"""

from __future__ import annotations

import anyio
import asyncpg
import pytest

from prefrontal.stores import Tenant, postgres
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.postgres import memory as pg_memory
from prefrontal.stores.postgres import memory_sql, migrations, thread_positions
from prefrontal.stores.postgres.database import Connection
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.testing.synthetic import memories
from tests.postgres_schemas import schema_at, schema_version

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="agent", user_id="user")


def _in_thread(thread: str, count: int) -> list[MemoryItem]:
    return [
        item.model_copy(update={"thread_id": thread, "position": n})
        for n, item in enumerate(memories(count, tenant=TENANT))
    ]


async def test_a_writer_waits_for_the_lock_and_reads_what_the_holder_committed(
    postgres_dsn: str, postgres_schema: str
) -> None:
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    assert await stores.episodic.get(TENANT, ["none"]) == []  # the schema made
    await stores.aclose()
    store = stores.episodic
    assert isinstance(store, PostgresMemoryStore)
    statement = f"SELECT {store.last_position(1)}"
    args = store.last_position_args(TENANT, "thread")
    other = store.last_position_args(TENANT, "other")
    settings = {"search_path": f'"{postgres_schema}"'}
    first = await asyncpg.connect(postgres_dsn, server_settings=settings)
    second = await asyncpg.connect(postgres_dsn, server_settings=settings)
    read: list[int] = []
    try:
        holding = first.transaction()
        await holding.start()
        assert await first.fetchval(statement, *args) == -1
        waiting = second.transaction()
        await waiting.start()
        assert await second.fetchval(statement, *other) == -1  # another thread: no wait

        async def wait() -> None:
            read.append(await second.fetchval(statement, *args))

        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await anyio.sleep(0.3)
            assert read == []  # the lock is held: the second writer waits
            await store.put_in(first, _in_thread("thread", 3))
            await holding.commit()
        assert read == [2]
        await waiting.rollback()
    finally:
        await first.close()
        await second.close()


async def test_a_schema_at_21_upgrades_and_reads_its_threads(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with schema_at(postgres_dsn, postgres_schema, 21) as connection:
        assert await connection.fetchval("SELECT to_regproc('episodic_thread_last')") is None
        rows = [pg_memory._row(item, "episodic") for item in _in_thread("thread", 4)]
        await connection.executemany(memory_sql.Statements("episodic").upsert, rows)
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        await stores.open()
        store = stores.episodic
        assert isinstance(store, PostgresMemoryStore)

        async def last(connection: Connection) -> int:
            return await store.last_position_in(connection, TENANT, "thread")

        assert await store.database.write(last, store="test") == 3
        assert await schema_version(postgres_dsn, postgres_schema) == migrations.LATEST
    finally:
        await stores.aclose()


async def test_a_schema_at_23_upgrades_to_reading_the_last_position_by_the_thread_index(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Schema 24 replaces the function's read (a thread of another user's positions above, one
    without positions and an empty thread read as before), and its plan reads the thread index
    even once kept while the table was a few rows."""
    other = Tenant(agent_id="agent", user_id="other")
    async with schema_at(postgres_dsn, postgres_schema, 23) as connection:
        assert "max(" in await connection.fetchval(
            "SELECT prosrc FROM pg_proc WHERE oid = to_regproc('episodic_thread_last')"
        )
        mine = [pg_memory._row(item, "episodic") for item in _in_thread("thread", 4)]
        theirs = [
            pg_memory._row(item.model_copy(update={"position": n + 10}), "episodic")
            for n, item in enumerate(_in_thread("thread", 3))
        ]
        theirs = [(row[0], row[1] + "-o", other.user_id, *row[3:]) for row in theirs]
        unplaced = _in_thread("loose", 2)
        loose = [
            pg_memory._row(item.model_copy(update={"position": None}), "episodic")
            for item in unplaced
        ]
        statement = memory_sql.Statements("episodic").upsert
        await connection.executemany(statement, mine + theirs + loose)
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=1)
    try:
        await stores.open()
        store = stores.episodic
        assert isinstance(store, PostgresMemoryStore)

        async def last(connection: Connection) -> list[int]:
            return [
                await store.last_position_in(connection, tenant, thread)
                for tenant, thread in (
                    (TENANT, "thread"),
                    (other, "thread"),
                    (TENANT, "loose"),
                    (TENANT, "none"),
                )
            ]

        for _ in range(8):  # past the custom plans: the session's kept plan answers too
            assert await store.database.write(last, store="test") == [3, 12, -1, -1]
        assert await schema_version(postgres_dsn, postgres_schema) == migrations.LATEST

        async def plan(connection: Connection) -> str:
            read = thread_positions.last_read("episodic")
            for n, name in enumerate(("p_agent", "p_thread", "p_user"), 1):
                read = read.replace(name, f"${n}::text")
            await connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            await connection.execute(f"PREPARE last_read AS {read}")
            found = await connection.fetch("EXPLAIN EXECUTE last_read('agent', 'thread', 'user')")
            await connection.execute("DEALLOCATE last_read")
            return "\n".join(row[0] for row in found)

        kept = await store.database.write(plan, store="test")  # a plan for any values
        assert "episodic_thread" in kept and "Sort" not in kept
    finally:
        await stores.aclose()
