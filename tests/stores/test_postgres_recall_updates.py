"""A recall's update of the items it counts stays on their pages (PostgreSQL, fillfactor 70).

Every turn updates the recall count and time of the items it recalled. On a
full page the new row version goes to another page and every index of the
table (the GIN index of term keys: some 50 entries a row) gets it again;
with room left on the page the update is a HOT one and writes no index entry.
"""

from __future__ import annotations

import asyncpg
import pytest

from prefrontal.stores import Tenant, postgres
from prefrontal.stores.postgres.migrations import FILLFACTOR
from prefrontal.testing.synthetic import memories
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="agent", user_id="user")


async def _pages(dsn: str, schema: str) -> dict[str, int]:
    """Each episodic item's page (the block of its ctid)."""
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(
            f'SELECT item_id, (ctid::text::point)[0]::bigint FROM "{schema}".episodic_items'
        )
    finally:
        await connection.close()
    return {row[0]: row[1] for row in rows}


async def test_recalled_items_stay_on_their_pages(postgres_dsn: str, postgres_schema: str) -> None:
    """A turn's recall (here one item in ten of 300 freshly written) moves none to another
    page."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        items = list(memories(300, tenant=TENANT))
        await stores.episodic.put_many(items)
        before = await _pages(postgres_dsn, postgres_schema)
        recalled = [item.item_id for item in items[::10]]
        await stores.episodic.record_recall(TENANT, recalled, FIXED_NOW)
        after = await _pages(postgres_dsn, postgres_schema)
    finally:
        await stores.aclose()
    assert len(before) == 300
    assert len(recalled) == 30
    moved = [item_id for item_id in recalled if after[item_id] != before[item_id]]
    assert moved == []
    assert FILLFACTOR < 100
