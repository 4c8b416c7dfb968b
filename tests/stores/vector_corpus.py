"""The corpus and the comparisons of the vector-search tests of every backend.

Alice's and Bob's items under one agent (every third Bob's, every fifth
shared), a secret text to plant, the hits of a search as comparable tuples,
and :func:`both_ways`: the hits a store gives from its vectors (SQLite's
vector files, PostgreSQL's vector cache) beside those of reading and scoring
every visible vector (``store.vectors = None``), which is exact search.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Protocol

import pytest

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.retrieval.vector_index import SIMSIMD
from prefrontal.stores import MemoryItem, MemoryKind, MemoryQuery, Scope, Stores, Tenant
from prefrontal.stores.long_term import ScoredMemory
from prefrontal.stores.sqlite import memory as sqlite_memory
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import memories
from tests.conftest import FIXED_NOW

ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")
DIMENSIONS = 64
SECRET = "orchid passport renewal in Lisbon"
Hit = tuple[str, str, float, dict[str, float]]
"""A hit as compared: item id, user id, score and signals."""

SCANS = [
    pytest.param(False, id="float32"),
    pytest.param(
        True,
        id="float16",
        marks=pytest.mark.skipif(SIMSIMD is None, reason="needs the vectors extra (simsimd)"),
    ),
]
"""Scan the float32 vectors, or the float16 unit vectors (with ``simsimd``)."""


class VectorStore(Protocol):
    """A memory store holding its vectors in ``vectors`` (``None``: read every vector)."""

    vectors: Any

    async def search(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]: ...


def embedder() -> HashingEmbedder:
    return HashingEmbedder(DIMENSIONS)


def count_full_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, one entry per SQLite search that read every visible vector instead of
    the vector files."""
    calls: list[int] = []
    original = sqlite_memory._Search._vector

    def counted(search: Any, connection: sqlite3.Connection, embedding: Any) -> Any:
        calls.append(1)
        return original(search, connection, embedding)

    monkeypatch.setattr(sqlite_memory._Search, "_vector", counted)
    return calls


def sqlite_episodic(stores: Stores) -> SqliteMemoryStore:
    """The episodic store of SQLite ``stores``, typed as what it is."""
    store = stores.episodic
    assert isinstance(store, SqliteMemoryStore)
    return store


def corpus(count: int) -> list[MemoryItem]:
    """``count`` synthetic items of Alice's agent, every third Bob's own, every fifth shared."""
    out = []
    for n, item in enumerate(memories(count, tenant=ALICE, start=at(0))):
        user = "bob" if n % 3 == 0 else "alice"
        scope = Scope.SHARED if n % 5 == 0 else Scope.PRIVATE
        out.append(item.model_copy(update={"user_id": user, "scope": scope}))
    return out


def secret(item_id: str, agent: str, user: str, text: str = SECRET) -> MemoryItem:
    """A private item of ``agent`` and ``user`` holding ``text``."""
    return MemoryItem(item_id=item_id, agent_id=agent, user_id=user, content=text, created_at=at(1))


async def hits(
    store: VectorStore,
    tenant: Tenant,
    text: str,
    limit: int = 10,
    kinds: tuple[MemoryKind, ...] | None = None,
) -> list[Hit]:
    """``tenant``'s hybrid search for ``text`` (at the tests' fixed now)."""
    query = MemoryQuery(text=text, limit=limit, now=FIXED_NOW, kinds=kinds)
    return [
        (h.item.item_id, h.item.user_id, h.score, h.signals)
        for h in await store.search(tenant, query)
    ]


async def both_ways(
    store: VectorStore,
    tenant: Tenant,
    text: str,
    limit: int,
    kinds: tuple[MemoryKind, ...] | None = None,
) -> tuple[list[Hit], list[Hit]]:
    """The hits from the store's vectors, then from reading every visible vector."""
    held = store.vectors
    from_vectors = await hits(store, tenant, text, limit, kinds)
    store.vectors = None
    try:
        scanned = await hits(store, tenant, text, limit, kinds)
    finally:
        store.vectors = held
    return from_vectors, scanned
