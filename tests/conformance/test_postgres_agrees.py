"""The in-memory and PostgreSQL memory stores give the same results for the same data."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores.long_term import MemoryItem, MemoryKind, MemoryQuery, ScoredMemory
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.memory_search import searchable_text
from prefrontal.stores.postgres import PostgresDatabase, PostgresMemoryStore
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Scope, Tenant
from prefrontal.testing.synthetic import memories, questions
from tests.conformance.test_backends_agree import corpus

pytestmark = pytest.mark.anyio

ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def database(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema, max_size=4)
    yield database
    await database.aclose()


def ranked(hits: list[ScoredMemory]) -> list[str]:
    return [hit.item.item_id for hit in hits]


async def test_lexical_search_ranks_alike(database: PostgresDatabase) -> None:
    """For every question and user, both backends return the same items, in order, same scores."""
    memory, postgres = InMemoryMemoryStore(), PostgresMemoryStore(database)
    items = corpus()
    await memory.put_many(items)
    await postgres.put_many(items)
    for text in questions(60):
        for tenant, limit in ((ALICE, 10), (BOB, 3), (ALICE, 50)):
            query = MemoryQuery(text=text, limit=limit)
            expected, got = await memory.search(tenant, query), await postgres.search(tenant, query)
            assert ranked(got) == ranked(expected), text
            assert [h.score for h in got] == [h.score for h in expected]
            assert [h.item for h in got] == [h.item for h in expected]


async def test_kind_filters_rank_alike(database: PostgresDatabase) -> None:
    """With a kinds filter, both backends return the same items with the same scores."""
    rng = random.Random(11)
    items = [
        item.model_copy(update={"kind": rng.choice(list(MemoryKind))})
        for item in memories(300, tenant=ALICE)
    ]
    memory, postgres = InMemoryMemoryStore(), PostgresMemoryStore(database, "semantic")
    await memory.put_many(items)
    await postgres.put_many(items)
    for text in questions(20):
        query = MemoryQuery(text=text, limit=10, kinds=(MemoryKind.FACT, MemoryKind.EVENT))
        expected, got = await memory.search(ALICE, query), await postgres.search(ALICE, query)
        assert [(h.item.item_id, h.score) for h in got] == [
            (h.item.item_id, h.score) for h in expected
        ], text


async def test_hybrid_search_ranks_alike(database: PostgresDatabase) -> None:
    """With the same vectors, fused BM25 and cosine rank the same items first in both."""
    embedder = HashingEmbedder(64)
    items = list(memories(400, tenant=ALICE))
    vectors = await embedder.embed([searchable_text(item) for item in items])
    as_stored = [tuple(np.asarray(v, dtype=np.float32).tolist()) for v in vectors]
    items = [
        item.model_copy(update={"embedding": v}) for item, v in zip(items, as_stored, strict=True)
    ]
    memory, postgres = InMemoryMemoryStore(), PostgresMemoryStore(database)
    await memory.put_many(items)
    await postgres.put_many(items)
    for text in questions(20):
        (vector,) = await embedder.embed([text])
        query = MemoryQuery(text=text, limit=10, embedding=vector)
        expected, got = await memory.search(ALICE, query), await postgres.search(ALICE, query)
        assert ranked(got) == ranked(expected), text
        assert [h.score for h in got] == pytest.approx([h.score for h in expected], rel=1e-6)


async def test_configured_embedders_rank_alike(postgres_dsn: str, postgres_schema: str) -> None:
    """The same embedder on both backends embeds items and queries alike: same ranking."""
    embedder = HashingEmbedder(64)
    memory = Stores.in_memory(embedder=embedder)
    postgres = Stores.postgres(postgres_dsn, schema=postgres_schema, embedder=embedder)
    items = list(memories(400, tenant=ALICE))
    await memory.episodic.put_many(items)
    await postgres.episodic.put_many(items)
    try:
        for text in questions(20):
            query = MemoryQuery(text=text, limit=10)
            expected = await memory.episodic.search(ALICE, query)
            got = await postgres.episodic.search(ALICE, query)
            assert ranked(got) == ranked(expected), text
            assert all(
                hit.signals.keys() == {"bm25", "vector"} for hit in got if "bm25" in hit.signals
            )
    finally:
        await postgres.aclose()


async def test_random_queries_on_a_dense_vocabulary_rank_alike(database: PostgresDatabase) -> None:
    """Three hundred random queries over heavily overlapping words: same top k in both backends."""
    rng = random.Random(5)
    vocabulary = ["apple", "pear", "plum", "fig", "kiwi", "lime", "date", "grape", "melon"]
    vocabulary += ["peach", "berry", "cherry"]
    items = [
        MemoryItem(
            item_id=f"d{i:04d}",
            agent_id="agent-1",
            user_id=rng.choice(["alice", "bob"]),
            scope=rng.choice(list(Scope)),
            content=" ".join(rng.choices(vocabulary, k=rng.randint(1, 9))),
        )
        for i in range(600)
    ]
    memory, postgres = InMemoryMemoryStore(), PostgresMemoryStore(database)
    await memory.put_many(items)
    await postgres.put_many(items)
    for _ in range(300):
        text = " ".join(rng.choices(vocabulary, k=rng.randint(1, 6)))
        query = MemoryQuery(text=text, limit=rng.randint(1, 25))
        tenant = rng.choice([ALICE, BOB])
        expected, got = await memory.search(tenant, query), await postgres.search(tenant, query)
        assert ranked(got) == ranked(expected), (text, query.limit)
        assert [h.score for h in got] == [h.score for h in expected]


async def test_replacements_keep_the_statistics_exact(database: PostgresDatabase) -> None:
    """After items are replaced with other text, scores still equal memory's and the kept statistics a recount."""
    rng = random.Random(7)
    vocabulary = ["apple", "pear", "plum", "fig", "kiwi", "lime", "date", "grape"]

    def note(i: int) -> MemoryItem:
        words = rng.choices(vocabulary, k=rng.randint(1, 6))
        return MemoryItem(
            item_id=f"n{i}", agent_id="agent-1", user_id="alice", content=" ".join(words)
        )

    memory, postgres = InMemoryMemoryStore(), PostgresMemoryStore(database)
    for _ in range(3):
        items = [note(i) for i in rng.sample(range(200), 120)]
        await memory.put_many(items)
        await postgres.put_many(items)
    for _ in range(50):
        query = MemoryQuery(text=" ".join(rng.choices(vocabulary, k=3)), limit=15)
        expected, got = await memory.search(ALICE, query), await postgres.search(ALICE, query)
        assert [(h.item.item_id, h.score) for h in got] == [
            (h.item.item_id, h.score) for h in expected
        ]

    async def recount(connection: Any) -> tuple[Any, ...]:
        kept = await connection.fetchrow("SELECT docs, tokens FROM episodic_stats")
        counted = await connection.fetchrow(
            "SELECT count(*), coalesce(sum(length), 0) FROM episodic_items"
        )
        terms_kept = await connection.fetch("SELECT term, df FROM episodic_terms WHERE df > 0")
        terms_counted = await connection.fetch(
            "SELECT t, count(*) FROM episodic_items, unnest(terms) AS t GROUP BY t"
        )
        return tuple(kept), tuple(counted), dict(terms_kept), dict(terms_counted)

    kept, counted, terms_kept, terms_counted = await database.read(recount, store="test")
    assert kept == counted
    assert terms_kept == terms_counted
