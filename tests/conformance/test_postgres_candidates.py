"""PostgreSQL search candidates are the tenant's own items and the agent's shared ones only.

Every read of a search is run under ``EXPLAIN ANALYZE`` as well, and the rows
its scans touched (handed over, then kept or filtered out) are added up:
another user's items, or another agent's, holding the same words must add
none, while the ranking stays the in-memory store's to the bit.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from prefrontal.retrieval.ranking import query_terms
from prefrontal.stores import MemoryItem, MemoryQuery, Tenant
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.postgres import PostgresDatabase, PostgresMemoryStore
from prefrontal.stores.postgres.memory_sql import Statements
from prefrontal.stores.postgres.term_keys import key
from prefrontal.stores.postgres.topk import TopK
from prefrontal.stores.tenancy import Scope
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import FEW_WORDS as WORDS
from prefrontal.testing.synthetic import worded
from tests.conftest import FIXED_NOW
from tests.stores.ranked_alike import assert_ranked_alike, random_queries

pytestmark = pytest.mark.anyio

CROWD_START, BACK = at(0) - timedelta(seconds=1), timedelta(seconds=-1)
"""The crowd's items: a second apart, back from a second before the first item."""
BYSTANDER = Tenant(agent_id="atlas", user_id="bystander")
CROWD = Tenant(agent_id="atlas", user_id="crowd")
STRANGER = Tenant(agent_id="other-agent", user_id="bystander")
_SCANS = ("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan")


class Touching:
    """A connection whose reads are each explained (analysed) first, counting rows touched."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.touched = 0

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        plan = await self.connection.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", *args)
        self.touched += _touched(json.loads(plan)[0]["Plan"])
        result: list[Any] = await self.connection.fetch(sql, *args)
        return result


def _touched(node: dict[str, Any]) -> int:
    """Rows the scans under ``node`` read: those they gave and those their filters dropped."""
    own = 0
    if node["Node Type"] in _SCANS:
        rows = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
        own = (rows + node.get("Rows Removed by Index Recheck", 0)) * node["Actual Loops"]
    return own + sum(_touched(child) for child in node.get("Plans", []))


async def rows_touched(database: PostgresDatabase, texts: list[str]) -> int:
    """The rows the bystander's top-5 searches of ``texts`` touched, all reads together."""
    params = (BYSTANDER.agent_id, BYSTANDER.user_id, FIXED_NOW, None)

    async def run(connection: Any) -> int:
        await connection.execute("ANALYZE episodic_items")
        spy = Touching(connection)
        for text in texts:
            keys = [key(term) for term in query_terms(text)]
            await TopK(Statements("episodic"), spy, params, keys).scores(5)
        return spy.touched

    touched: int = await database.write(run, store="test")
    return touched


@pytest.fixture
async def database(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema, max_size=2)
    yield database
    await database.aclose()


async def test_other_users_items_add_no_candidates(database: PostgresDatabase) -> None:
    """3,000 items of another user and 1,000 of another agent, all of the words, touch nothing."""
    store, reference = PostgresMemoryStore(database), InMemoryMemoryStore()

    async def both(batch: list[MemoryItem]) -> None:
        await store.put_many(batch)
        await reference.put_many(batch)

    await both(list(worded(40, tenant=BYSTANDER, seed=1, prefix="b", start=at(0))))
    await both(list(worded(10, tenant=CROWD, seed=2, prefix="s", start=at(0))))
    texts = [" ".join(random.Random(n).sample(WORDS, 3)) for n in range(6)]
    alone = await rows_touched(database, texts)
    await both(list(worded(3_000, tenant=CROWD, prefix="c", start=CROWD_START, step=BACK)))
    await both(list(worded(1_000, tenant=STRANGER, prefix="x", start=CROWD_START, step=BACK)))
    crowded = await rows_touched(database, texts)
    queries = random_queries(random.Random(5), WORDS, (1, 3, 10, 60), 40, FIXED_NOW)
    await assert_ranked_alike(reference, store, BYSTANDER, queries)
    # The bystander sees 42 items; each read touches some of them at most.
    assert crowded <= max(2 * alone, 42 * 6 * len(WORDS)), (alone, crowded)
    assert crowded < 3_000, (alone, crowded)


async def test_a_changed_scope_moves_the_item_in_the_index(database: PostgresDatabase) -> None:
    """Shared, the item is found by another user of the agent; private again, it is not."""
    store = PostgresMemoryStore(database)
    other = Tenant(agent_id=CROWD.agent_id, user_id="someone")
    item = next(worded(1, tenant=CROWD, prefix="c", start=CROWD_START, step=BACK))
    query = MemoryQuery(text="ferry ticket", now=FIXED_NOW)
    found = []
    for scope in (Scope.PRIVATE, Scope.SHARED, Scope.PRIVATE):
        await store.put(item.model_copy(update={"scope": scope}))
        found.append([hit.item.item_id for hit in await store.search(other, query)])
    mine = await store.search(CROWD, query)
    assert found == [[], ["c0"], []]
    assert [hit.item.item_id for hit in mine] == ["c0"]
