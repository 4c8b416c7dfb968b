"""The in-memory store and each durable backend (SQLite, PostgreSQL) give the same results.

Every scenario runs twice, once per durable backend; the PostgreSQL runs
skip when no server can be started (see ``tests/postgres_server.py``).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from prefrontal.retrieval.embedder import Embedder, HashingEmbedder
from prefrontal.stores import postgres, sqlite
from prefrontal.stores.long_term import MemoryItem, MemoryKind, MemoryQuery, ScoredMemory
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.memory_search import searchable_text
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Scope, Tenant
from prefrontal.testing.synthetic import memories, questions

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 2, 1, tzinfo=UTC)
"""When every search is made: after the whole synthetic corpus, and after its expiries."""
ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")

OpenStores = Callable[[Embedder | None], Stores]
"""Opens a fresh, empty set of durable stores (with this embedder, or none)."""


def corpus() -> list[MemoryItem]:
    """Two users' memories, with expired items and superseded versions among them."""
    items = [*memories(1_500, tenant=ALICE), *memories(500, tenant=BOB, seed=3, prefix="b")]
    start = items[0].created_at
    for i in range(0, len(items), 7):
        items[i] = items[i].model_copy(update={"valid_until": start})
    newer = [
        items[i].model_copy(
            update={"item_id": f"{items[i].item_id}-v2", "supersedes": items[i].item_id}
        )
        for i in range(3, len(items), 11)
    ]
    return items + newer


@pytest.fixture(params=["sqlite", "postgres"])
async def durable(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[OpenStores]:
    """Opens empty stores of one durable backend: a new SQLite file, or a new PostgreSQL schema."""
    opened: list[Stores] = []
    count = itertools.count()
    if request.param == "sqlite":

        def open_stores(embedder: Embedder | None) -> Stores:
            opened.append(
                sqlite.open_stores(tmp_path / f"agree-{next(count)}.db", embedder=embedder)
            )
            return opened[-1]

    else:
        dsn: str = request.getfixturevalue("postgres_dsn")
        schema: str = request.getfixturevalue("postgres_schema")

        def open_stores(embedder: Embedder | None) -> Stores:
            name = f"{schema}_{next(count)}"
            opened.append(postgres.open_stores(dsn, schema=name, embedder=embedder, max_size=4))
            return opened[-1]

    yield open_stores
    for stores in opened:
        await stores.aclose()


def ranked(hits: list[ScoredMemory]) -> list[str]:
    return [hit.item.item_id for hit in hits]


async def test_lexical_search_ranks_alike(durable: OpenStores) -> None:
    """For every question and user, both backends return the same items, in order, same scores."""
    memory, stored = InMemoryMemoryStore(), durable(None).episodic
    items = corpus()
    await memory.put_many(items)
    await stored.put_many(items)
    for text in questions(60):
        for tenant, limit in ((ALICE, 10), (BOB, 3), (ALICE, 50)):
            query = MemoryQuery(text=text, limit=limit, now=NOW)
            expected, got = await memory.search(tenant, query), await stored.search(tenant, query)
            assert ranked(got) == ranked(expected), text
            assert [h.score for h in got] == [h.score for h in expected]
            assert [h.item for h in got] == [h.item for h in expected]


async def test_kind_filters_rank_alike(durable: OpenStores) -> None:
    """With a kinds filter, both backends return the same items with the same scores."""
    rng = random.Random(11)
    items = [
        item.model_copy(update={"kind": rng.choice(list(MemoryKind))})
        for item in memories(300, tenant=ALICE)
    ]
    memory, stored = InMemoryMemoryStore(), durable(None).semantic
    await memory.put_many(items)
    await stored.put_many(items)
    for text in questions(20):
        query = MemoryQuery(text=text, limit=10, kinds=(MemoryKind.FACT, MemoryKind.EVENT), now=NOW)
        expected, got = await memory.search(ALICE, query), await stored.search(ALICE, query)
        assert [(h.item.item_id, h.score) for h in got] == [
            (h.item.item_id, h.score) for h in expected
        ], text


async def test_hybrid_search_ranks_alike(durable: OpenStores) -> None:
    """With the same vectors, fused BM25 and cosine rank the same items first in both."""
    embedder = HashingEmbedder(64)
    items = list(memories(400, tenant=ALICE))
    vectors = await embedder.embed([searchable_text(item) for item in items])
    as_stored = [tuple(np.asarray(v, dtype=np.float32).tolist()) for v in vectors]
    items = [
        item.model_copy(update={"embedding": v}) for item, v in zip(items, as_stored, strict=True)
    ]
    memory, stored = InMemoryMemoryStore(), durable(None).episodic
    await memory.put_many(items)
    await stored.put_many(items)
    for text in questions(20):
        (vector,) = await embedder.embed([text])
        query = MemoryQuery(text=text, limit=10, embedding=vector, now=NOW)
        expected, got = await memory.search(ALICE, query), await stored.search(ALICE, query)
        assert ranked(got) == ranked(expected), text
        assert [h.score for h in got] == pytest.approx([h.score for h in expected], rel=1e-6)


async def test_configured_embedders_rank_alike(durable: OpenStores) -> None:
    """The same embedder on both backends embeds items and queries alike: same ranking."""
    embedder = HashingEmbedder(64)
    memory = Stores.in_memory(embedder=embedder)
    stored = durable(embedder)
    items = list(memories(400, tenant=ALICE))
    await memory.episodic.put_many(items)
    await stored.episodic.put_many(items)
    for text in questions(20):
        query = MemoryQuery(text=text, limit=10, now=NOW)
        expected = await memory.episodic.search(ALICE, query)
        got = await stored.episodic.search(ALICE, query)
        assert ranked(got) == ranked(expected), text
        assert all(hit.signals.keys() == {"bm25", "vector"} for hit in got if "bm25" in hit.signals)


async def test_random_queries_on_a_dense_vocabulary_rank_alike(durable: OpenStores) -> None:
    """Five hundred random queries over heavily overlapping words: same top k in both backends."""
    rng = random.Random(5)
    vocabulary = [
        "apple",
        "pear",
        "plum",
        "fig",
        "kiwi",
        "lime",
        "date",
        "grape",
        "melon",
        "peach",
        "berry",
        "cherry",
    ]
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
    memory, stored = InMemoryMemoryStore(), durable(None).episodic
    await memory.put_many(items)
    await stored.put_many(items)
    for _ in range(500):
        text = " ".join(rng.choices(vocabulary, k=rng.randint(1, 6)))
        query = MemoryQuery(text=text, limit=rng.randint(1, 25), now=NOW)
        tenant = rng.choice([ALICE, BOB])
        expected, got = await memory.search(tenant, query), await stored.search(tenant, query)
        assert ranked(got) == ranked(expected), (text, query.limit)
        assert [h.score for h in got] == [h.score for h in expected]


async def test_rarest_terms_held_only_by_hidden_items_rank_alike(durable: OpenStores) -> None:
    """Items holding the three rarest query terms that are expired, superseded or another user's
    do not stop visible items holding fewer of them from ranking as in memory."""
    rng = random.Random(11)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rare, common = ["quokka", "narwhal", "ocelot"], ["lemur", "otter", "panda"]

    def item(i: int, words: list[str], **update: object) -> MemoryItem:
        fields: dict[str, object] = {
            "item_id": f"h{i:04d}",
            "agent_id": "agent-1",
            "user_id": "alice",
        }
        fields |= {"content": " ".join(words), "created_at": start} | update
        return MemoryItem.model_validate(fields)

    hidden = [
        item(0, rare, user_id="bob", scope=Scope.PRIVATE),
        item(1, rare, valid_until=start),
        item(2, [*rare, "lemur"]),
        item(3, [*rare, "otter"], supersedes="h0002", valid_until=start),
        item(4, rare, user_id="bob", scope=Scope.PRIVATE),
    ]
    visible = [
        item(10 + i, rng.sample(rare, rng.randint(1, 2)) + rng.choices(common, k=rng.randint(0, 8)))
        for i in range(60)
    ]
    filler = [item(100 + i, rng.choices(common, k=rng.randint(1, 6))) for i in range(400)]
    items = hidden + visible + filler
    memory, stored = InMemoryMemoryStore(), durable(None).episodic
    await memory.put_many(items)
    await stored.put_many(items)
    for limit in (1, 3, 10, 40):
        for text in ("quokka narwhal ocelot lemur", "ocelot narwhal quokka otter panda"):
            query = MemoryQuery(text=text, limit=limit, now=start)
            expected, got = await memory.search(ALICE, query), await stored.search(ALICE, query)
            assert ranked(got) == ranked(expected), (text, limit)
            assert [h.score for h in got] == [h.score for h in expected]
            assert not {"h0000", "h0001", "h0002", "h0003", "h0004"} & set(ranked(got))


async def test_best_item_past_the_first_chunk_of_the_warm_up_ranks_alike(
    durable: OpenStores,
) -> None:
    """More items hold the rarest terms than the warm-up reads: the best one, last, still wins."""
    rng = random.Random(13)
    filler = ["lemur", "otter", "panda", "koala", "bison", "moose"]
    items = [
        MemoryItem(
            item_id=f"w{i:04d}",
            agent_id="agent-1",
            user_id="alice",
            content=" ".join(["alpha", "beta", "gamma", *rng.choices(filler, k=8)]),
        )
        for i in range(1_200)
    ]
    best = MemoryItem(
        item_id="w9999", agent_id="agent-1", user_id="alice", content="alpha beta gamma"
    )
    memory, stored = InMemoryMemoryStore(), durable(None).episodic
    await memory.put_many([*items, best])
    await stored.put_many([*items, best])
    for limit in (1, 5):
        query = MemoryQuery(text="alpha beta gamma", limit=limit, now=NOW)
        expected, got = await memory.search(ALICE, query), await stored.search(ALICE, query)
        assert ranked(got)[0] == "w9999"
        assert ranked(got) == ranked(expected)
        assert [h.score for h in got] == [h.score for h in expected]
