"""A SQLite hybrid search that finds its store's vector files held by another search.

It ranks its BM25 top while it waits (no statement of its transaction
needs the files), then scans: the hits are those of a search that waited
first. When the files moved past the snapshot it ranked in while it
waited (another process wrote), it runs again in a new transaction, from
the files, rather than reading every vector.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryItem, MemoryQuery, Stores, sqlite
from prefrontal.stores.sqlite import memory as sqlite_memory
from prefrontal.stores.sqlite.hybrid import HybridSearch
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import memories, questions
from tests.conftest import FIXED_NOW
from tests.stores.vector_corpus import ALICE, DIMENSIONS, count_full_reads, sqlite_episodic

pytestmark = pytest.mark.anyio

Hit = tuple[str, float, dict[str, float]]


def _episodic(stores: Stores) -> SqliteMemoryStore:
    store = sqlite_episodic(stores)
    assert store.vectors is not None
    return store


async def _hits(store: SqliteMemoryStore, text: str, limit: int = 30) -> list[Hit]:
    found = await store.search(ALICE, MemoryQuery(text=text, limit=limit, now=FIXED_NOW))
    return [(h.item.item_id, h.score, h.signals) for h in found]


class _Ranked:
    """Counts the BM25 tops ranked while waiting; ``done`` is set after each."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.done = threading.Event()
        original = HybridSearch.lexical_top

        def counted(search: HybridSearch, connection: sqlite3.Connection, texts: Any) -> Any:
            found = original(search, connection, texts)
            self.count += 1
            self.done.set()
            return found

        monkeypatch.setattr(HybridSearch, "lexical_top", counted)


async def _while_held(
    store: SqliteMemoryStore, text: str, ranked: _Ranked, meanwhile: Any = None
) -> list[Hit]:
    """``text``'s hits from a search that finds the vector files held (by this test) until it
    has ranked its BM25 top; ``meanwhile`` (async) runs before they are let go."""
    assert store.vectors is not None
    lock = store.vectors.lock
    found: list[list[Hit]] = []

    async def search() -> None:
        found.append(await _hits(store, text))

    ranked.done.clear()
    lock.acquire()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(search)
            await anyio.to_thread.run_sync(ranked.done.wait)
            if meanwhile is not None:
                await meanwhile()
            lock.release()
    finally:
        if lock.locked():
            lock.release()
    return found[0]


async def test_a_search_that_waits_for_the_vector_files_gives_the_same_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranked while another holds the files, the hits, scores and signals are the same."""
    stores = sqlite.open_stores(tmp_path / "m.db", embedder=HashingEmbedder(DIMENSIONS))
    store = _episodic(stores)
    try:
        await store.put_many(list(memories(600, tenant=ALICE, start=at(0))))
        asked = questions(8)
        alone = [await _hits(store, text) for text in asked]
        ranked = _Ranked(monkeypatch)
        waited = [await _while_held(store, text, ranked) for text in asked]
    finally:
        await stores.aclose()
    assert ranked.count == len(asked)
    assert waited == alone
    assert any(alone)


async def test_files_moved_past_the_snapshot_run_the_search_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's write, followed by its files while the search waited: the search runs
    again in a new transaction (it sees the write) and never reads every vector."""
    path = tmp_path / "m.db"
    stores = sqlite.open_stores(path, embedder=HashingEmbedder(DIMENSIONS))
    other = sqlite.open_stores(path, embedder=HashingEmbedder(DIMENSIONS))
    store = _episodic(stores)
    full_reads = count_full_reads(monkeypatch)
    runs: list[bool] = []  # per run of a search: whether it gave hits (False: run again)
    search = sqlite_memory._Search.__call__

    def noted(self: Any, connection: sqlite3.Connection) -> Any:
        found = search(self, connection)
        runs.append(found is not None)
        return found

    monkeypatch.setattr(sqlite_memory._Search, "__call__", noted)
    text = "orchid passport renewal in Lisbon"
    new = MemoryItem(
        item_id="new", agent_id="agent-1", user_id="alice", content=text, created_at=at(1)
    )
    try:
        await store.put_many(list(memories(300, tenant=ALICE, start=at(0))))
        await _hits(store, text)
        ranked = _Ranked(monkeypatch)

        async def write() -> None:
            await other.episodic.put(new)

        runs.clear()
        waited = await _while_held(store, text, ranked, write)
        assert runs == [False, True]
        after = await _hits(store, text)
    finally:
        await other.aclose()
        await stores.aclose()
    assert ranked.count == 1
    assert waited == after
    assert waited[0][0] == "new"
    assert full_reads == []
