"""The in-memory memory store with an embedder: vectors at write time, the query's at search."""

from __future__ import annotations

import pytest

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores.long_term import MemoryItem, MemoryQuery
from prefrontal.stores.memory.memory import InMemoryMemoryStore
from prefrontal.stores.tenancy import Tenant
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="agent", user_id="user")


def item(item_id: str, content: str) -> MemoryItem:
    return MemoryItem(
        item_id=item_id, agent_id="agent", user_id="user", content=content, created_at=FIXED_NOW
    )


async def test_items_are_embedded_when_written_and_queries_when_searched() -> None:
    """Stored items carry a vector; hits carry a ``vector`` signal beside ``bm25``."""
    embedder = HashingEmbedder(64)
    store = InMemoryMemoryStore("episodic", embedder=embedder)
    await store.put_many([item("a", "the beagle puppy"), item("b", "marathon training")])
    [stored] = await store.get(TENANT, ["a"])
    assert stored.embedding is not None and len(stored.embedding) == 64
    hits = await store.search(TENANT, MemoryQuery(text="beagle", now=FIXED_NOW))
    assert hits[0].item.item_id == "a"
    assert set(hits[0].signals) == {"bm25", "vector"}


async def test_a_given_embedding_is_kept() -> None:
    """An item that brings its own vector is not re-embedded."""
    store = InMemoryMemoryStore("episodic", embedder=HashingEmbedder(4))
    await store.put(item("a", "x").model_copy(update={"embedding": (1.0, 0.0, 0.0, 0.0)}))
    [stored] = await store.get(TENANT, ["a"])
    assert stored.embedding == (1.0, 0.0, 0.0, 0.0)
