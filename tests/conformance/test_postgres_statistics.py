"""PostgreSQL's trigger-kept BM25 statistics stay exact as items are replaced.

The searches that must agree with the in-memory store on both durable
backends are in ``test_backends_agree.py``.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from prefrontal.stores.long_term import MemoryItem, MemoryQuery
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.postgres import PostgresDatabase, PostgresMemoryStore
from prefrontal.stores.tenancy import Tenant
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio

ALICE = Tenant(agent_id="agent-1", user_id="alice")


@pytest.fixture
async def database(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema, max_size=4)
    yield database
    await database.aclose()


async def test_replacements_keep_the_statistics_exact(database: PostgresDatabase) -> None:
    """After items are replaced with other text, scores still equal memory's and the kept statistics a recount."""
    rng = random.Random(7)
    vocabulary = ["apple", "pear", "plum", "fig", "kiwi", "lime", "date", "grape"]

    def note(i: int) -> MemoryItem:
        words = rng.choices(vocabulary, k=rng.randint(1, 6))
        return MemoryItem(
            item_id=f"n{i}",
            agent_id="agent-1",
            user_id="alice",
            content=" ".join(words),
            created_at=FIXED_NOW,
        )

    memory, postgres = InMemoryMemoryStore(), PostgresMemoryStore(database)
    for _ in range(3):
        items = [note(i) for i in rng.sample(range(200), 120)]
        await memory.put_many(items)
        await postgres.put_many(items)
    for _ in range(50):
        query = MemoryQuery(text=" ".join(rng.choices(vocabulary, k=3)), limit=15, now=FIXED_NOW)
        expected, got = await memory.search(ALICE, query), await postgres.search(ALICE, query)
        assert [(h.item.item_id, h.score) for h in got] == [
            (h.item.item_id, h.score) for h in expected
        ]

    async def recount(connection: Any) -> tuple[Any, ...]:
        kept = await connection.fetch("SELECT agent_id, docs, tokens FROM episodic_agent_stats")
        counted = await connection.fetch(
            "SELECT agent_id, count(*), sum(length) FROM episodic_items GROUP BY agent_id"
        )
        terms_kept = await connection.fetch(
            "SELECT agent_id, term, df FROM episodic_terms WHERE df > 0"
        )
        terms_counted = await connection.fetch(
            "SELECT agent_id, t, count(*) FROM episodic_items, unnest(terms) AS t"
            " GROUP BY agent_id, t"
        )
        return (
            {tuple(row) for row in kept},
            {tuple(row) for row in counted},
            {tuple(row) for row in terms_kept},
            {tuple(row) for row in terms_counted},
        )

    kept, counted, terms_kept, terms_counted = await database.read(recount, store="test")
    assert kept == counted
    assert terms_kept == terms_counted
