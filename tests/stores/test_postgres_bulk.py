"""PostgreSQL's set-wise ``put_many``: the same schema contents as one ``put`` after another.

The batch of :mod:`tests.stores.bulk_batch` (new items of two agents and three users
in runs, items replacing stored ones or ones earlier in the batch, items
that supersede others, vectors, terms held once, twice and three times or
more) is written by ``put_many`` into one schema and item by item into
another, on the real server the tests start: every item row (its terms,
counts, impact tokens and visibility keys included), the per-agent
statistics, the per-term statistics and search results are the same. A row
another transaction inserts between the writer's look-up and its insert is
counted once; a failed run leaves nothing written.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from prefrontal.stores import postgres
from prefrontal.stores.postgres.bulk import AT_LEAST, SETTING
from prefrontal.stores.postgres.memory import PostgresMemoryStore, _row
from tests.stores.bulk_batch import batch, one_run, searched, stored, written
from tests.stores.postgres_schema import schema_connection

pytestmark = pytest.mark.anyio


async def dump(dsn: str, schema: str, name: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row that describes ``name``'s items and statistics, in a fixed order."""
    queries = {
        "items": f"""SELECT agent_id, item_id, user_id, scope, kind, importance, created_at,
                valid_until, superseded_by, recall_count, last_recalled_at, thread_id, position,
                body, terms, counts, length, embedding, impacts, visible
            FROM {name}_items ORDER BY agent_id, item_id, user_id""",
        "terms": f"SELECT * FROM {name}_terms ORDER BY agent_id, owner, term",
        "agents": f"SELECT * FROM {name}_agent_stats ORDER BY agent_id",
        "owners": f"SELECT * FROM {name}_owner_stats ORDER BY agent_id, owner",
    }
    async with schema_connection(dsn, schema) as connection:
        return {
            key: [tuple(row) for row in await connection.fetch(sql)] for key, sql in queries.items()
        }


def _store(stores: Any, name: str) -> PostgresMemoryStore:
    store = stores.episodic if name == "episodic" else stores.semantic
    assert isinstance(store, PostgresMemoryStore)
    return store


@pytest.fixture
async def episodic(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[PostgresMemoryStore]:
    """The episodic store of stores opened on the test schema (closed after)."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    yield _store(stores, "episodic")
    await stores.aclose()


@pytest.mark.parametrize("name", ["episodic", "semantic"])
async def test_put_many_leaves_what_puts_one_by_one_leave(
    postgres_dsn: str, postgres_schema: str, name: str
) -> None:
    """Rows, visibility keys, statistics and search results are the same."""
    rng = random.Random(40)
    before, items = stored(rng), batch(rng)
    results = {}
    for schema, bulk in ((f"{postgres_schema}_bulk", True), (f"{postgres_schema}_one", False)):
        stores = postgres.open_stores(postgres_dsn, schema=schema, max_size=2)
        store = _store(stores, name)
        await written(store, before, items, bulk=bulk)
        results[bulk] = await searched(store)
        await stores.aclose()
    bulk_rows = await dump(postgres_dsn, f"{postgres_schema}_bulk", name)
    single_rows = await dump(postgres_dsn, f"{postgres_schema}_one", name)
    assert len(bulk_rows["items"]) == len({(i.agent_id, i.item_id, i.user_id) for i in items}) + 9
    assert any(row[3] == 3 for row in bulk_rows["terms"])  # a term held three times
    assert {row[0] for row in bulk_rows["agents"]} == {"atlas", "orion"}
    for key, rows in single_rows.items():
        assert bulk_rows[key] == rows, key
    assert results[True] == results[False]


async def test_new_items_are_one_insert_with_the_trigger_left_out(
    postgres_dsn: str, postgres_schema: str, episodic: PostgresMemoryStore
) -> None:
    """A run of new items is written by one insert; the trigger counts none of them twice."""
    store = episodic
    items = one_run(5, 2 * AT_LEAST)
    statements: list[str] = []
    writer = store._bulk
    real_insert = writer._insert

    async def run(connection: Any) -> None:
        connection.add_query_logger(lambda record: statements.append(record.query))
        await store.put_in(connection, items)

    await store.database.write(run, store="episodic")
    assert sum(s == real_insert for s in statements) == 1
    assert not any("ON CONFLICT (agent_id, item_id, user_id) DO UPDATE" in s for s in statements)
    rows = await dump(postgres_dsn, postgres_schema, "episodic")
    assert rows["agents"] == [("atlas", 2 * AT_LEAST, sum(row[16] for row in rows["items"]))]
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        setting = await connection.fetchval("SELECT current_setting($1, true)", SETTING)
    assert setting in (None, "", "off")


async def test_a_row_inserted_meanwhile_is_counted_once(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Between the look-up and the insert another writer adds one of the keys: the run skips
    it, takes it out of its counts, and upserts it after; the counts are those of puts."""
    items = one_run(6, AT_LEAST)
    race, single = f"{postgres_schema}_race", f"{postgres_schema}_one"
    stores = postgres.open_stores(postgres_dsn, schema=race, max_size=2)
    store = _store(stores, "episodic")
    looked_up = store._bulk._taken

    async def late(connection: Any, rows: Any) -> set[tuple[str, ...]]:
        found = await looked_up(connection, rows)
        async with schema_connection(postgres_dsn, race) as other:
            await other.execute(store._sql.upsert, *_row(items[7], "episodic"))
        return found

    store._bulk._taken = late  # type: ignore[method-assign]
    await store.put_many(items)
    await stores.aclose()
    stores = postgres.open_stores(postgres_dsn, schema=single, max_size=2)
    for item in [items[7], *items]:
        await stores.episodic.put(item)
    await stores.aclose()
    raced = await dump(postgres_dsn, race, "episodic")
    assert raced == await dump(postgres_dsn, single, "episodic")
    assert raced["agents"][0][1] == AT_LEAST


async def test_a_failed_run_rolls_back_and_leaves_the_trigger_counting(
    postgres_dsn: str, postgres_schema: str, episodic: PostgresMemoryStore
) -> None:
    """A statement of the run fails: nothing is written, and a later put is counted as usual."""
    store = episodic
    items = one_run(7, 2 * AT_LEAST)
    writer = store._bulk
    terms = writer._terms
    writer._terms = "SELECT no_such_function($1, $2, $3, $4, $5, $6, $7, $8)"
    with pytest.raises(Exception, match="no_such_function"):
        await store.put_many(items)
    writer._terms = terms
    rows = await dump(postgres_dsn, postgres_schema, "episodic")
    assert rows == {"items": [], "terms": [], "agents": [], "owners": []}
    await store.put(items[0])
    rows = await dump(postgres_dsn, postgres_schema, "episodic")
    assert rows["agents"] == [("atlas", 1, rows["items"][0][16])]
    assert all(row[3] == 1 for row in rows["terms"])
