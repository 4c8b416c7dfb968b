"""The memory API on every backend: remember, recall, get, update, forget, and its errors.

Each test runs on new in-memory stores, a new SQLite file and a new
PostgreSQL schema, every store with the hashing embedder, so that recall
takes the hybrid path and updates recompute embeddings.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from prefrontal import MemoryAPI, NotFoundError, Orchestrator, Stores, TurnRequest
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryKind, MemoryQuery, Scope, Tenant, postgres, sqlite
from prefrontal.stores.memory_search import searchable_text

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE = Tenant(agent_id="atlas", user_id="alice")
BOB = Tenant(agent_id="atlas", user_id="bob")
EMBEDDER = HashingEmbedder(64)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    """Fresh stores of one backend, with the hashing embedder."""
    if request.param == "memory":
        opened = Stores.in_memory(embedder=EMBEDDER)
    elif request.param == "sqlite":
        opened = sqlite.open_stores(tmp_path / "memory.db", embedder=EMBEDDER)
    else:
        dsn: str = request.getfixturevalue("postgres_dsn")
        schema: str = request.getfixturevalue("postgres_schema")
        opened = postgres.open_stores(dsn, schema=schema, max_size=4, embedder=EMBEDDER)
    yield opened
    await opened.aclose()


@pytest.fixture
def memory(stores: Stores) -> MemoryAPI:
    """The API over ``stores``, at a fixed moment, with numbered ids."""
    numbers = iter(range(1, 1_000))
    return MemoryAPI(stores, clock=lambda: T0, ids=lambda: f"mem-{next(numbers)}")


async def recalled(memory: MemoryAPI, tenant: Tenant, query: str) -> list[str]:
    """The contents ``recall`` returns, best first."""
    return [hit.item.content for hit in await memory.recall(tenant, query)]


async def test_remember_then_recall_finds_it_in_either_store(memory: MemoryAPI) -> None:
    """A fact and an event are both recalled, fused into one list, best match first."""
    fact = await memory.remember(ALICE, "Alice is allergic to peanuts", source="user")
    event = await memory.remember(
        ALICE, "Alice ordered a peanut-free cake for Friday", store="episodic"
    )
    await memory.remember(ALICE, "Alice prefers window seats on trains")
    hits = await memory.recall(ALICE, "peanuts allergy cake")
    assert {hit.item.item_id for hit in hits[:2]} == {fact.item_id, event.item_id}
    assert hits[0].item.item_id == fact.item_id
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert fact.metadata == {"source": "user"}
    assert (fact.item_id, fact.kind, fact.importance, fact.created_at) == (
        "mem-1",
        MemoryKind.FACT,
        0.5,
        T0,
    )


async def test_recall_counts_what_it_returns(memory: MemoryAPI) -> None:
    """Each recalled item's recall count and time are recorded; top_k bounds the hits."""
    for n in range(5):
        await memory.remember(ALICE, f"note {n} about the quarterly budget")
    hits = await memory.recall(ALICE, "quarterly budget", top_k=2)
    assert len(hits) == 2
    again = await memory.get(ALICE, hits[0].item.item_id)
    assert again is not None
    assert (again.recall_count, again.last_recalled_at) == (1, T0)


async def test_recall_within_a_token_bound(memory: MemoryAPI) -> None:
    """With max_tokens, recall stops before the contents pass that many tokens."""
    for n in range(4):
        await memory.remember(ALICE, f"budget line {n}: " + "travel costs rose again " * 5)
    hits = await memory.recall(ALICE, "budget travel costs", max_tokens=60)
    assert 1 <= len(hits) < 4


async def test_recall_respects_tenancy(memory: MemoryAPI) -> None:
    """Another user's private memories are never recalled; the ones they shared are."""
    await memory.remember(BOB, "Bob's locker code is 4312")
    await memory.remember(BOB, "The office locker room closes at eight", scope=Scope.SHARED)
    await memory.remember(Tenant(agent_id="other", user_id="alice"), "locker 99 is alice's")
    assert await recalled(memory, ALICE, "locker code") == [
        "The office locker room closes at eight"
    ]


async def test_two_users_remembering_one_id_keep_their_own(memory: MemoryAPI) -> None:
    """Bob remembering ``note-1`` leaves Alice's ``note-1`` as it was."""
    await memory.remember(ALICE, "Alice's dentist is on Tuesday", item_id="note-1")
    await memory.remember(BOB, "Bob's dentist is on Monday", item_id="note-1")
    alices = await memory.get(ALICE, "note-1")
    bobs = await memory.get(BOB, "note-1")
    assert alices is not None and bobs is not None
    assert (alices.content, bobs.content) == (
        "Alice's dentist is on Tuesday",
        "Bob's dentist is on Monday",
    )
    assert await recalled(memory, ALICE, "dentist") == ["Alice's dentist is on Tuesday"]


async def test_get_prefers_the_tenants_own_item_to_a_shared_one(memory: MemoryAPI) -> None:
    """Where Bob shared ``faq`` and Alice has her own ``faq``, Alice gets hers; Carol gets Bob's."""
    await memory.remember(BOB, "shared answer", item_id="faq", scope=Scope.SHARED)
    await memory.remember(ALICE, "alice's answer", item_id="faq")
    carol = Tenant(agent_id="atlas", user_id="carol")
    mine, theirs = await memory.get(ALICE, "faq"), await memory.get(carol, "faq")
    assert mine is not None and theirs is not None
    assert (mine.content, theirs.content) == ("alice's answer", "shared answer")
    assert await memory.get(ALICE, "unknown") is None


async def test_update_reindexes_and_recomputes_the_embedding(
    memory: MemoryAPI, stores: Stores
) -> None:
    """New content is searched by its new words, with a fresh embedding; id and times stay."""
    item = await memory.remember(ALICE, "The team offsite is in Porto")
    updated = await memory.update(ALICE, item.item_id, content="The team offsite moved to Lyon")
    assert await recalled(memory, ALICE, "Porto") == []
    assert await recalled(memory, ALICE, "Lyon offsite") == ["The team offsite moved to Lyon"]
    (stored,) = await stores.semantic.get(ALICE, [item.item_id])
    (expected,) = await EMBEDDER.embed([searchable_text(updated)])
    assert stored.embedding is not None
    assert all(
        math.isclose(a, b, abs_tol=1e-6) for a, b in zip(stored.embedding, expected, strict=True)
    )
    assert (stored.item_id, stored.created_at, stored.recall_count) == (item.item_id, T0, 1)


async def test_update_of_importance_only_keeps_the_content(memory: MemoryAPI) -> None:
    """Changing the importance alone leaves the content and its search as they were."""
    item = await memory.remember(ALICE, "Rent is due on the first", importance=0.2)
    updated = await memory.update(ALICE, item.item_id, importance=0.9)
    assert (updated.content, updated.importance) == ("Rent is due on the first", 0.9)
    got = await memory.get(ALICE, item.item_id)
    assert got is not None and got.importance == 0.9
    assert await recalled(memory, ALICE, "rent due") == ["Rent is due on the first"]


async def test_update_of_an_unknown_or_foreign_item_is_not_found(memory: MemoryAPI) -> None:
    """Updating an id the tenant does not own raises NotFoundError, shared or not."""
    await memory.remember(BOB, "shared rule", item_id="rule", scope=Scope.SHARED)
    with pytest.raises(NotFoundError, match="nope"):
        await memory.update(ALICE, "nope", content="x")
    with pytest.raises(NotFoundError, match="rule"):
        await memory.update(ALICE, "rule", importance=1.0)
    got = await memory.get(BOB, "rule")
    assert got is not None and got.importance == 0.5


async def test_forget_removes_the_tenants_item_only(memory: MemoryAPI) -> None:
    """forget removes Alice's item (True once, then False) and never Bob's of the same id."""
    await memory.remember(ALICE, "Alice's wifi password is hunter2", item_id="wifi")
    await memory.remember(BOB, "Bob's wifi password is swordfish", item_id="wifi")
    await memory.remember(BOB, "guest wifi is open", item_id="guest", scope=Scope.SHARED)
    assert await memory.forget(ALICE, "wifi") is True
    assert await memory.forget(ALICE, "wifi") is False
    assert await memory.forget(ALICE, "guest") is False
    assert await memory.get(ALICE, "wifi") is None
    assert await recalled(memory, ALICE, "wifi password") == ["guest wifi is open"]
    bobs = await memory.get(BOB, "wifi")
    assert bobs is not None and bobs.content == "Bob's wifi password is swordfish"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.remember(ALICE, ""), "content must be non-empty"),
        (lambda m: m.remember(ALICE, "   \n"), "content must be non-empty"),
        (lambda m: m.remember(ALICE, "x", importance=-0.1), "importance must be from 0.0"),
        (lambda m: m.remember(ALICE, "x", importance=1.5), "importance must be from 0.0"),
        (lambda m: m.remember(ALICE, "x", importance=math.nan), "importance must be from 0.0"),
        (lambda m: m.remember(ALICE, "x", store="procedural"), "store must be one of"),
        (lambda m: m.remember(ALICE, "x", item_id=""), "item_id must be non-empty"),
        (lambda m: m.recall(ALICE, " "), "query must be non-empty"),
        (lambda m: m.recall(ALICE, "x", top_k=0), "top_k must be 1 to 1000"),
        (lambda m: m.recall(ALICE, "x", max_tokens=0), "max_tokens must be at least 1"),
        (lambda m: m.recall(ALICE, "x", max_tokens=math.nan), "max_tokens must be at least 1"),
        (lambda m: m.recall(ALICE, "x", max_tokens=math.inf), "max_tokens must be at least 1"),
        (lambda m: m.recall(ALICE, "x", top_k=math.nan), "top_k must be 1 to 1000"),
        (lambda m: m.get(ALICE, ""), "item_id must be non-empty"),
        (lambda m: m.update(ALICE, "a"), "nothing to update"),
        (lambda m: m.update(ALICE, "a", content=""), "content must be non-empty"),
        (lambda m: m.update(ALICE, "a", importance=2.0), "importance must be from 0.0"),
        (lambda m: m.forget(ALICE, ""), "item_id must be non-empty"),
        (lambda m: m.erase("atlas", ""), "user_id"),
    ],
)
async def test_bad_input_is_a_clear_value_error(
    memory: MemoryAPI, call: object, message: str
) -> None:
    """Empty text, an importance out of 0-1, a bad top_k or an empty id raise ValueError saying so."""
    with pytest.raises(ValueError, match=message):
        await call(memory)  # type: ignore[operator]


async def test_the_orchestrators_memory_feeds_the_next_turn(stores: Stores) -> None:
    """What orchestrator.memory remembers is in the next turn's context, with its id."""
    orchestrator = Orchestrator(stores, clock=lambda: T0 + timedelta(minutes=5))
    item = await orchestrator.memory.remember(ALICE, "Alice's passport expires in March")
    result = await orchestrator.start_turn(
        TurnRequest(
            agent_id="atlas",
            user_id="alice",
            session_id="s1",
            user_input="When does my passport expire?",
        )
    )
    ids = {i for fragment in result.bundle.fragments for i in fragment.provenance.item_ids}
    assert item.item_id in ids
    assert "passport expires in March" in result.bundle.text


async def test_recall_searches_as_the_store_does(memory: MemoryAPI, stores: Stores) -> None:
    """recall returns the items the stores' own search finds for the query, none else."""
    for n, topic in enumerate(["ferry times", "ferry prices", "bus routes", "train strikes"]):
        await memory.remember(ALICE, f"{topic} for week {n}", store=("semantic", "episodic")[n % 2])
    hits = await memory.recall(ALICE, "ferry")
    found = set()
    for store in (stores.episodic, stores.semantic):
        found |= {
            h.item.item_id for h in await store.search(ALICE, MemoryQuery(text="ferry", now=T0))
        }
    assert {h.item.item_id for h in hits} == found
