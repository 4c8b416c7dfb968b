"""Plans a connection keeps, made while the tables were a few rows, read what a turn's reads
need whatever the tables grow to: a plan made once for any values (the generic plan, which a
connection keeps after a statement's first executions) is made on a small table here, and
must read the neighbours of a search's anchors by key and by the thread index (never every
row of the agent), and a lexical search's term statistics by their whole key (never every
owner's terms of the agent)."""

from __future__ import annotations

from typing import Any

import pytest

from prefrontal.stores import Tenant, postgres
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.postgres import lexical_search
from prefrontal.stores.postgres.database import Connection
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.testing.synthetic import memories

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="agent", user_id="user")


def _threaded(count: int) -> list[MemoryItem]:
    return [
        item.model_copy(update={"thread_id": f"thread-{n % 2}", "position": n // 2})
        for n, item in enumerate(memories(count, tenant=TENANT))
    ]


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, list):
        return "ARRAY[" + ", ".join(_literal(v) for v in value) + "]::text[]"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


async def _kept_plan(store: PostgresMemoryStore, statement: str, args: tuple[Any, ...]) -> str:
    """The plan made once for any values of ``statement``, run with ``args`` (literals)."""

    async def explain(connection: Connection) -> str:
        await connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        await connection.execute(f"PREPARE kept AS {statement}")
        values = ", ".join(_literal(v) for v in args)
        try:
            found = await connection.fetch(f"EXPLAIN EXECUTE kept({values})")
        finally:
            await connection.execute("DEALLOCATE kept")
        return "\n".join(row[0] for row in found)

    plan: str = await store.database.write(explain, store="test")
    return plan


@pytest.fixture
async def store(postgres_dsn: str, postgres_schema: str) -> Any:
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=1)
    await stores.episodic.put_many(_threaded(12))
    yield stores.episodic
    await stores.aclose()


async def test_the_neighbours_of_anchors_are_read_by_key_and_by_the_thread_index(
    store: PostgresMemoryStore,
) -> None:
    items = _threaded(12)
    anchors = [items[4].item_id, items[7].item_id]
    plan = await _kept_plan(
        store, store._sql.around, ("agent", "user", "2030-01-01T00:00:00Z", anchors, 1)
    )
    assert "episodic_thread" in plan and "episodic_items_pkey" in plan
    assert "episodic_items_listed" not in plan and "Seq Scan on episodic_items" not in plan
    found = await store.around(TENANT, anchors, radius=1, now=items[-1].created_at)
    assert sorted(item.item_id for item in found) == sorted(items[n].item_id for n in (2, 5, 6, 9))


async def test_a_lexical_search_reads_term_statistics_by_their_whole_key(
    store: PostgresMemoryStore,
) -> None:
    keys = ["alpha", "beta", "gamma"]
    args = ("agent", "user", "2030-01-01T00:00:00Z", None, keys, 3, 2000, 1.0, 600)
    plan = await _kept_plan(store, lexical_search.statement("episodic"), args)
    terms = [line for line in plan.splitlines() if "episodic_terms" in line]
    assert terms, plan
    conditions = [line for line in plan.splitlines() if "Index Cond" in line and "owner" in line]
    assert conditions, plan
    assert not any("Filter: (owner" in line for line in plan.splitlines()), plan
