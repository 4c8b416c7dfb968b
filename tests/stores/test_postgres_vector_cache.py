"""PostgreSQL hybrid search from the process's vector cache (and its files).

The cache gives the hits that reading and scoring every visible vector
gives (``vector_cache=False``); follows other connections' writes and
deletions through the change log, including a transaction that took its
id before the cache's snapshot and committed after it; filters by tenant
inside the search; keeps its files private, maps them in a fresh process
without reading every vector, rebuilds them on doubt, and overwrites an
erased or forgotten row's vector bytes in them.
"""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.retrieval.vector_index import SIMSIMD
from prefrontal.retrieval.vectors import to_blob
from prefrontal.stores import MemoryItem, MemoryQuery, Scope, Stores, Tenant, postgres
from prefrontal.stores.capabilities import ranked_search
from prefrontal.stores.postgres import memory as postgres_memory
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.vector_cache import VectorCache
from prefrontal.stores.postgres.vector_log import KEPT_DELETIONS, PRUNE_EVERY
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import memories, questions
from tests.conftest import FIXED_NOW
from tests.stores.postgres_schema import schema_connection, to_schema_10

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")
DIMENSIONS = 64
SECRET = "orchid passport renewal in Lisbon"
Hit = tuple[str, str, float, dict[str, float]]


def _embedder() -> HashingEmbedder:
    return HashingEmbedder(DIMENSIONS)


def _corpus(count: int) -> list[MemoryItem]:
    """``count`` synthetic items of Alice's agent, every third Bob's own, every fifth shared."""
    out = []
    for n, item in enumerate(memories(count, tenant=ALICE, start=at(0))):
        user = "bob" if n % 3 == 0 else "alice"
        scope = Scope.SHARED if n % 5 == 0 else Scope.PRIVATE
        out.append(item.model_copy(update={"user_id": user, "scope": scope}))
    return out


def _secret(item_id: str, agent: str, user: str, text: str = SECRET) -> MemoryItem:
    return MemoryItem(item_id=item_id, agent_id=agent, user_id=user, content=text, created_at=at(1))


def _open(dsn: str, schema: str, cache: Path | bool = True) -> Stores:
    return postgres.open_stores(
        dsn, schema=schema, embedder=_embedder(), max_size=4, vector_cache=cache
    )


def _episodic(stores: Stores) -> PostgresMemoryStore:
    store = stores.episodic
    assert isinstance(store, PostgresMemoryStore)
    return store


def _cache(store: PostgresMemoryStore) -> VectorCache:
    assert store.vectors is not None
    return store.vectors


@pytest.fixture
async def opened(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[Stores]:
    stores = _open(postgres_dsn, postgres_schema)
    yield stores
    await stores.aclose()


@pytest.fixture
def scanned_every_row(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the searches that read every visible vector (the path without the cache)."""
    calls: list[int] = []

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return await ranked_search(*args, **kwargs)

    monkeypatch.setattr(postgres_memory, "ranked_search", counted)
    return calls


async def _hits(
    store: PostgresMemoryStore, tenant: Tenant, text: str, limit: int = 10
) -> list[Hit]:
    found = await store.search(tenant, MemoryQuery(text=text, limit=limit, now=FIXED_NOW))
    return [(h.item.item_id, h.item.user_id, h.score, h.signals) for h in found]


async def _both_ways(
    store: PostgresMemoryStore, tenant: Tenant, text: str, limit: int
) -> tuple[list[Hit], list[Hit]]:
    """The hits from the cache, then from reading every visible vector."""
    held = store.vectors
    cached = await _hits(store, tenant, text, limit)
    store.vectors = None
    try:
        scanned = await _hits(store, tenant, text, limit)
    finally:
        store.vectors = held
    return cached, scanned


SCANS = [
    pytest.param(False, id="float32"),
    pytest.param(
        True,
        id="float16",
        marks=pytest.mark.skipif(SIMSIMD is None, reason="needs the vectors extra (simsimd)"),
    ),
]


@pytest.mark.parametrize("half", SCANS)
@pytest.mark.parametrize("count", [30, 600])
async def test_hybrid_hits_equal_those_of_scoring_every_vector(
    opened: Stores, count: int, half: bool
) -> None:
    """Hits, scores and signals from the cache equal those of reading every vector."""
    store = _episodic(opened)
    _cache(store).half = half
    await store.put_many(_corpus(count))
    for text in questions(25):
        for tenant, limit in ((ALICE, 10), (BOB, 5)):
            cached, scanned = await _both_ways(store, tenant, text, limit)
            assert cached == scanned
    assert _cache(store).rebuilds == 1


async def test_searches_use_the_cache_and_follow_writes_and_deletions(
    postgres_dsn: str, postgres_schema: str, opened: Stores, scanned_every_row: list[int]
) -> None:
    """Another process's writes and deletions show in the next search, applied from the log."""
    store = _episodic(opened)
    await store.put_many([*_corpus(300), _secret("alices-own", "agent-1", "alice")])
    assert (await _hits(store, ALICE, SECRET))[0][0] == "alices-own"
    other = _open(postgres_dsn, postgres_schema, cache=False)
    try:
        fresh = "lighthouse keeper telescope inventory"
        await other.episodic.put(_secret("fresh", "agent-1", "alice", fresh))
        await other.episodic.delete(ALICE, ["alices-own"])
        expired = _corpus(300)[1].model_copy(update={"valid_until": at(0)})
        await other.episodic.put(expired)
    finally:
        await other.aclose()
    assert (await _hits(store, ALICE, fresh))[0][0] == "fresh"
    assert "alices-own" not in [hit[0] for hit in await _hits(store, ALICE, SECRET)]
    assert _cache(store).rebuilds == 1
    assert _cache(store).updates >= 1  # from the log; other commits may add updates
    assert scanned_every_row == []
    for text in [fresh, SECRET, *questions(5)]:
        cached, scanned = await _both_ways(store, ALICE, text, 10)
        assert cached == scanned


async def test_a_transaction_committed_after_the_cache_moved_on_is_not_missed(
    postgres_dsn: str, postgres_schema: str, opened: Stores
) -> None:
    """A write whose transaction began before the cache's snapshot and committed after it."""
    store = _episodic(opened)
    await store.put_many(_corpus(100))
    await _hits(store, ALICE, SECRET)
    connection = await asyncpg.connect(
        postgres_dsn, server_settings={"search_path": postgres_schema}
    )
    try:
        transaction = connection.transaction()
        await transaction.start()
        row = postgres_memory._row(_secret("late", "agent-1", "alice"), "episodic")
        row = (*row[:17], to_blob((await _embedder().embed([SECRET]))[0]), *row[18:])
        await connection.execute(store._sql.upsert, *row)
        meanwhile = _secret("meanwhile", "agent-2", "alice", "walrus tusk ivory")
        await store.put(meanwhile)  # another agent: its statistics row is not the one held
        other = Tenant(agent_id="agent-2", user_id="alice")
        assert (await _hits(store, other, "walrus tusk ivory"))[0][0] == "meanwhile"
        assert _cache(store).updates >= 1  # the cache moved on past the open transaction
        await transaction.commit()
    finally:
        await connection.close()
    assert (await _hits(store, ALICE, SECRET))[0][0] == "late"
    cached, scanned = await _both_ways(store, ALICE, SECRET, 10)
    assert cached == scanned


async def test_private_vectors_of_others_are_never_returned_even_when_nearest(
    opened: Stores, scanned_every_row: list[int]
) -> None:
    """Another agent's and another user's private items are left out inside the vector search."""
    store = _episodic(opened)
    await store.put_many(_corpus(300))
    await store.put_many(
        [
            _secret("bobs-secret", "agent-1", "bob"),
            _secret("other-agent", "agent-2", "alice"),
            _secret("alices-own", "agent-1", "alice"),
        ]
    )
    (vector,) = await _embedder().embed([SECRET])
    query = MemoryQuery(text="", embedding=vector, limit=40, now=FIXED_NOW)
    hits = await store.search(ALICE, query)
    assert hits[0].item.item_id == "alices-own"
    assert all(h.item.agent_id == "agent-1" for h in hits)
    assert all(h.item.user_id == "alice" or h.item.scope is Scope.SHARED for h in hits)
    assert "bobs-secret" in [h.item.item_id for h in await store.search(BOB, query)]
    assert scanned_every_row == []


async def test_files_are_private_and_a_new_process_maps_them_without_reading_every_vector(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> None:
    """The directory is 0700 and each file 0600; a fresh store maps them, rebuilding nothing."""
    root = tmp_path / "cache"
    first = _open(postgres_dsn, postgres_schema, root)
    try:
        await _episodic(first).put_many(_corpus(200))
        expected = await _hits(_episodic(first), ALICE, SECRET)
        assert _cache(_episodic(first)).rebuilds == 1
    finally:
        await first.aclose()
    (directory,) = root.iterdir()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert {f.name for f in directory.iterdir()} >= {"state", "snapshot", "matrix.0", "half.0"}
    for file in directory.iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file.name
    second = _open(postgres_dsn, postgres_schema, root)
    try:
        store = _episodic(second)
        assert await _hits(store, ALICE, SECRET) == expected
        assert _cache(store).rebuilds == 0
        updates = _cache(store).updates  # any commit in the cluster may advance the snapshot
        await store.put(_secret("new", "agent-1", "alice"))
        assert (await _hits(store, ALICE, SECRET))[0][0] == "new"
        assert _cache(store).rebuilds == 0
        assert _cache(store).updates > updates
    finally:
        await second.aclose()


def _occurrences(directory: Path, needles: list[bytes]) -> int:
    data = b"".join(f.read_bytes() for f in directory.iterdir() if f.is_file())
    return sum(needle in data for needle in needles)


def _half(blob: bytes) -> bytes:
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float64)
    return (vector / np.linalg.norm(vector)).astype(np.float16).tobytes()


async def test_erase_and_forget_overwrite_the_vectors_in_the_files(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> None:
    """No erased or forgotten vector is left in the files, even from a process that never
    searched; the others all are."""
    root = tmp_path / "cache"
    searcher = _open(postgres_dsn, postgres_schema, root)
    eraser = _open(postgres_dsn, postgres_schema, root)
    try:
        items = _corpus(120)
        await _episodic(searcher).put_many(items)
        await _hits(_episodic(searcher), ALICE, SECRET)
        (directory,) = root.iterdir()
        embedded = await _embedder().embed([searchable(item) for item in items])
        blobs = [to_blob(vector) for vector in embedded]
        alices = [b for b, item in zip(blobs, items, strict=True) if item.user_id == "alice"]
        bobs = [b for b, item in zip(blobs, items, strict=True) if item.user_id == "bob"]
        assert _occurrences(directory, alices) == len(alices)
        assert _occurrences(directory, [_half(b) for b in alices]) == len(alices)
        assert await _episodic(eraser).erase(ALICE) == len(alices)
        assert _occurrences(directory, alices) == 0
        assert _occurrences(directory, [_half(b) for b in alices]) == 0
        assert _occurrences(directory, bobs) == len(bobs)
        forgotten = [item.item_id for item in items if item.user_id == "bob"][:5]
        assert await _episodic(eraser).delete(BOB, forgotten) == 5
        assert _occurrences(directory, bobs) == len(bobs) - 5
        assert _cache(_episodic(searcher)).rebuilds == 1
        assert _cache(_episodic(eraser)).rebuilds == 0
    finally:
        await searcher.aclose()
        await eraser.aclose()


def searchable(item: MemoryItem) -> str:
    from prefrontal.stores.memory_search import searchable_text

    return searchable_text(item)


async def test_a_cache_left_changing_or_naming_another_table_is_rebuilt(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> None:
    """A change left half done, or a state naming another table, rebuilds from the rows."""
    root = tmp_path / "cache"
    stores = _open(postgres_dsn, postgres_schema, root)
    try:
        store = _episodic(stores)
        await store.put_many(_corpus(100))
        expected = await _hits(store, ALICE, SECRET)
    finally:
        await stores.aclose()
    (directory,) = root.iterdir()
    for word, value in ((3, 1), (8, 12345)):  # the changing flag; the table's identity
        state = np.memmap(directory / "state", dtype=np.int64, mode="r+", shape=(12,))
        state[word] = value
        state.flush()
        del state
        reopened = _open(postgres_dsn, postgres_schema, root)
        try:
            assert await _hits(_episodic(reopened), ALICE, SECRET) == expected
            assert _cache(_episodic(reopened)).rebuilds == 1
        finally:
            await reopened.aclose()


async def test_a_cache_older_than_the_deletion_log_is_rebuilt(
    postgres_dsn: str, postgres_schema: str, opened: Stores
) -> None:
    """Once the log's horizon passes the cache's snapshot, the next search reads every row."""
    store = _episodic(opened)
    await store.put_many(_corpus(100))
    await _hits(store, ALICE, SECRET)
    connection = await asyncpg.connect(
        postgres_dsn, server_settings={"search_path": postgres_schema}
    )
    try:
        await connection.execute(
            "INSERT INTO episodic_gone_horizon (horizon) VALUES (pg_current_xact_id())"
        )
    finally:
        await connection.close()
    await store.put(_secret("new", "agent-1", "alice"))
    assert (await _hits(store, ALICE, SECRET))[0][0] == "new"
    assert _cache(store).rebuilds == 2


async def test_the_deletion_log_is_pruned_past_its_length(
    postgres_dsn: str, postgres_schema: str, opened: Stores
) -> None:
    """Past the kept deletions, the log drops its oldest entries and records the horizon."""
    store = _episodic(opened)
    await store.put_many(_corpus(10))
    connection = await asyncpg.connect(
        postgres_dsn, server_settings={"search_path": postgres_schema}
    )
    try:
        assert await store.erase(ALICE) == 6  # logged under the first numbers
        sequence = "pg_get_serial_sequence('episodic_gone', 'seq')"
        await connection.execute(f"SELECT setval({sequence}, {KEPT_DELETIONS + PRUNE_EVERY - 2})")
        assert await store.erase(BOB) == 4  # the log's count passes a multiple of PRUNE_EVERY
        kept = await connection.fetchval("SELECT count(*) FROM episodic_gone")
        horizons = await connection.fetchval("SELECT count(*) FROM episodic_gone_horizon")
    finally:
        await connection.close()
    assert kept == 4
    assert horizons == 1


async def test_a_schema_at_version_10_gains_slots_and_stamps_and_searches_as_a_new_one(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Migration 11 numbers the existing rows; the cache then reads them all once."""
    old = _open(postgres_dsn, postgres_schema, cache=False)
    try:
        await _episodic(old).put_many(_corpus(200))
    finally:
        await old.aclose()
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        await to_schema_10(connection)
        await connection.execute("DELETE FROM schema_migrations WHERE version > 10")
    stores = _open(postgres_dsn, postgres_schema)
    try:
        store = _episodic(stores)
        for text in questions(5):
            cached, scanned = await _both_ways(store, ALICE, text, 10)
            assert cached == scanned
        assert _cache(store).rebuilds == 1
    finally:
        await stores.aclose()


async def test_opening_ahead_builds_the_cache_before_the_first_search(
    postgres_dsn: str, postgres_schema: str, scanned_every_row: list[int]
) -> None:
    """``Stores.open`` (what the orchestrator calls at start-up) brings the cache up to date."""
    filler = _open(postgres_dsn, postgres_schema, cache=False)
    try:
        await _episodic(filler).put_many(_corpus(200))
    finally:
        await filler.aclose()
    stores = _open(postgres_dsn, postgres_schema)
    try:
        store = _episodic(stores)
        await stores.open()
        assert _cache(store).rebuilds == 1
        await _hits(store, ALICE, SECRET)
        assert (_cache(store).rebuilds, _cache(store).updates) == (1, 0)
        assert scanned_every_row == []
    finally:
        await stores.aclose()
