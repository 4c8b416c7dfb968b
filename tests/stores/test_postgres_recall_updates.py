"""A recall's count rewrites no item row (PostgreSQL): it goes to the narrow ``<name>_recalls``.

Every turn counts the items it recalled. Written into the items' own rows,
each count would be a new version of a wide row (its generated keys, its
triggers, often every index entry again); a row of ``episodic_recalls``
holds it instead, and every read gives it in place of the item's own
counters. A put of the item (which writes the counters it is given), a
delete and an erase drop that row, so no count outlives its item.
"""

from __future__ import annotations

from datetime import timedelta

import asyncpg
import pytest

from prefrontal.stores import MemoryQuery, Tenant, postgres
from prefrontal.stores.memory_pages import ListsMemories
from prefrontal.stores.postgres.migrations import FILLFACTOR
from prefrontal.testing.synthetic import memories
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="agent", user_id="user")


async def _fetch(dsn: str, schema: str, statement: str) -> list[asyncpg.Record]:
    connection = await asyncpg.connect(dsn)
    try:
        return list(await connection.fetch(statement.replace("{schema}", f'"{schema}"')))
    finally:
        await connection.close()


async def _places(dsn: str, schema: str) -> dict[str, str]:
    """Each episodic item's row version (its ctid)."""
    rows = await _fetch(dsn, schema, "SELECT item_id, ctid::text FROM {schema}.episodic_items")
    return {row[0]: row[1] for row in rows}


async def _recall_rows(dsn: str, schema: str) -> dict[str, int]:
    rows = await _fetch(dsn, schema, "SELECT item_id, recall_count FROM {schema}.episodic_recalls")
    return {row[0]: row[1] for row in rows}


async def test_a_recall_rewrites_no_item_row(postgres_dsn: str, postgres_schema: str) -> None:
    """A turn's recall (here one item in ten of 300 freshly written) leaves every item's row
    version where it was, and writes one row per item counted to ``episodic_recalls``."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        items = list(memories(300, tenant=TENANT))
        await stores.episodic.put_many(items)
        before = await _places(postgres_dsn, postgres_schema)
        recalled = [item.item_id for item in items[::10]]
        await stores.episodic.record_recall(TENANT, recalled, FIXED_NOW)
        await stores.episodic.record_recall(TENANT, recalled[:5], FIXED_NOW)
        after = await _places(postgres_dsn, postgres_schema)
        counted = await _recall_rows(postgres_dsn, postgres_schema)
    finally:
        await stores.aclose()
    assert len(before) == 300
    assert after == before
    assert counted == {item_id: 2 if n < 5 else 1 for n, item_id in enumerate(recalled)}
    assert FILLFACTOR < 100


async def test_every_read_gives_the_recall_rows_counts(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """get, search, around and the pages give the counts of the recall rows, on top of the
    counters an item was put with."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    later = FIXED_NOW + timedelta(minutes=5)
    try:
        items = list(memories(20, tenant=TENANT))
        first = items[0].model_copy(update={"recall_count": 4, "last_recalled_at": FIXED_NOW})
        await stores.episodic.put_many([first, *items[1:]])
        await stores.episodic.record_recall(TENANT, [first.item_id], later)
        [got] = await stores.episodic.get(TENANT, [first.item_id])
        query = MemoryQuery(text=first.content, limit=20, now=FIXED_NOW)
        found = {hit.item.item_id: hit.item for hit in await stores.episodic.search(TENANT, query)}
        pages = stores.episodic
        assert isinstance(pages, ListsMemories)
        listed = {item.item_id: item for item in await pages.listed(TENANT, limit=50)}
    finally:
        await stores.aclose()
    for item in (got, found[first.item_id], listed[first.item_id]):
        assert (item.recall_count, item.last_recalled_at) == (5, later)
    assert (listed[items[1].item_id].recall_count, listed[items[1].item_id].last_recalled_at) == (
        0,
        None,
    )


async def test_a_put_delete_or_erase_drops_the_recall_row(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """A put writes the counters it is given (the recall row dropped); a delete and an erase
    leave no recall row of the items they remove."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        items = list(memories(6, tenant=TENANT))
        await stores.episodic.put_many(items)
        await stores.episodic.record_recall(TENANT, [item.item_id for item in items], FIXED_NOW)
        await stores.episodic.put(items[0])
        [put] = await stores.episodic.get(TENANT, [items[0].item_id])
        assert (put.recall_count, put.last_recalled_at) == (0, None)
        assert await stores.episodic.delete(TENANT, [items[1].item_id]) == 1
        left = await _recall_rows(postgres_dsn, postgres_schema)
        assert set(left) == {item.item_id for item in items[2:]}
        assert await stores.episodic.erase(TENANT) == 5
        assert await _recall_rows(postgres_dsn, postgres_schema) == {}
    finally:
        await stores.aclose()
