"""SQLite hybrid search from the vectors held in memory.

The store keeps its vectors in memory, follows other connections' and
processes' writes through the change log, filters by tenant before it
ranks, and gives the hits that reading and scoring every visible vector
gives (``vectors = None``).
"""

from __future__ import annotations

import sqlite3
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.retrieval.vector_index import SIMSIMD
from prefrontal.stores import MemoryItem, MemoryKind, MemoryQuery, Scope, Stores, Tenant, sqlite
from prefrontal.stores.sqlite import memory as sqlite_memory
from prefrontal.stores.sqlite import migrations as sqlite_migrations
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.vectors import KEPT_DELETIONS
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import memories, questions
from tests.conftest import FIXED_NOW
from tests.stores.sqlite_schema import to_schema_4

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")
DIMENSIONS = 64
SECRET = "orchid passport renewal in Lisbon"


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


def _secret(item_id: str, agent: str, user: str) -> MemoryItem:
    return MemoryItem(
        item_id=item_id, agent_id=agent, user_id=user, content=SECRET, created_at=at(1)
    )


def _episodic(stores: Stores) -> SqliteMemoryStore:
    store = stores.episodic
    assert isinstance(store, SqliteMemoryStore)
    return store


Hit = tuple[str, str, float, dict[str, float]]


async def _hits(
    store: SqliteMemoryStore,
    tenant: Tenant,
    text: str,
    limit: int = 10,
    kinds: tuple[MemoryKind, ...] | None = None,
) -> list[Hit]:
    query = MemoryQuery(text=text, limit=limit, now=FIXED_NOW, kinds=kinds)
    found = await store.search(tenant, query)
    return [(h.item.item_id, h.item.user_id, h.score, h.signals) for h in found]


async def _both_ways(
    store: SqliteMemoryStore,
    tenant: Tenant,
    text: str,
    limit: int,
    kinds: tuple[MemoryKind, ...] | None = None,
) -> tuple[list[Hit], list[Hit]]:
    """The hits from the vectors in memory, then from reading every visible vector."""
    held = store.vectors
    indexed = await _hits(store, tenant, text, limit, kinds)
    store.vectors = None
    try:
        scanned = await _hits(store, tenant, text, limit, kinds)
    finally:
        store.vectors = held
    return indexed, scanned


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per search that read every visible vector instead of the vector files."""
    calls: list[int] = []
    original = sqlite_memory._Search._vector

    def counted(search: Any, connection: sqlite3.Connection, embedding: Any) -> Any:
        calls.append(1)
        return original(search, connection, embedding)

    monkeypatch.setattr(sqlite_memory._Search, "_vector", counted)
    return calls


SCANS = [
    pytest.param(False, id="float32"),
    pytest.param(
        True,
        id="float16",
        marks=pytest.mark.skipif(SIMSIMD is None, reason="needs the vectors extra (simsimd)"),
    ),
]


@pytest.mark.parametrize("half", SCANS)
@pytest.mark.parametrize("count", [30, 600, 4000])
async def test_hybrid_hits_equal_those_of_scoring_every_vector(
    tmp_path: Path, count: int, half: bool, full_reads: list[int]
) -> None:
    """Hits, scores and signals from the vectors in memory equal those of reading every vector.

    Past a few rows, every search is answered from the vector files (only the
    reference reads every vector).
    """
    stores = sqlite.open_stores(tmp_path / "m.db", embedder=_embedder())
    store = _episodic(stores)
    assert store.vectors is not None
    store.vectors.half = half
    try:
        await store.put_many(_corpus(count))
        for text in questions(25):
            for tenant, limit, kinds in (
                (ALICE, 10, None),
                (BOB, 5, None),
                (ALICE, 20, (MemoryKind.TOOL_RESULT,)),
            ):
                before = len(full_reads)
                indexed, scanned = await _both_ways(store, tenant, text, limit, kinds)
                assert indexed == scanned
                assert count < 600 or len(full_reads) == before + 1
        with (
            sqlite3.connect(tmp_path / "m.db") as connection,
            store.vectors.rows(connection) as held,
        ):
            assert held is not None
            assert (held.half is not None) is half
            assert held.size == count
    finally:
        await stores.aclose()


@pytest.mark.parametrize("half", SCANS)
async def test_hits_tied_at_the_last_place_are_chosen_by_key_as_when_scoring_every_vector(
    tmp_path: Path, half: bool, full_reads: list[int]
) -> None:
    """Items tied on both signals across the last place of the top k: the same ones, in the
    same order, as reading and scoring every vector gives (ties broken by key)."""
    stores = sqlite.open_stores(tmp_path / "m.db", embedder=_embedder())
    store = _episodic(stores)
    assert store.vectors is not None
    store.vectors.half = half
    twins = [
        _secret(f"twin-{n:02d}", ALICE.agent_id, "bob" if n % 2 else "alice").model_copy(
            update={"scope": Scope.SHARED}
        )
        for n in (7, 3, 11, 0, 9, 4, 1, 10, 5, 2, 8, 6)
    ]
    try:
        await store.put_many(_corpus(600) + twins)
        for limit in (5, 10, 20):
            indexed, scanned = await _both_ways(store, ALICE, SECRET, limit)
            assert indexed == scanned
            assert len(full_reads) == 1
            full_reads.clear()
            tied = [hit for hit in indexed if hit[0].startswith("twin-")]
            assert len(tied) == min(limit, len(twins))
            assert len({hit[2] for hit in tied}) == 1
            assert [hit[0] for hit in tied] == sorted(hit[0] for hit in tied)
    finally:
        await stores.aclose()


async def test_private_vectors_of_others_are_never_returned_even_when_nearest(
    tmp_path: Path,
) -> None:
    """Another agent's and another user's private items are left out inside the vector search."""
    stores = sqlite.open_stores(tmp_path / "m.db", embedder=_embedder())
    store = _episodic(stores)
    try:
        await store.put_many(_corpus(300))
        await store.put_many(
            [
                _secret("bobs-secret", "agent-1", "bob"),
                _secret("other-agent", "agent-2", "alice"),
                _secret("alices-own", "agent-1", "alice"),
            ]
        )
        query = MemoryQuery(text="", embedding=await _vector(SECRET), limit=40, now=FIXED_NOW)
        hits = await store.search(ALICE, query)
        assert hits[0].item.item_id == "alices-own"
        assert all(h.item.agent_id == "agent-1" for h in hits)
        assert all(h.item.user_id == "alice" or h.item.scope is Scope.SHARED for h in hits)
        assert "bobs-secret" in [h.item.item_id for h in await store.search(BOB, query)]
    finally:
        await stores.aclose()


async def _vector(text: str) -> tuple[float, ...]:
    (vector,) = await _embedder().embed([text])
    return vector


WRITER = textwrap.dedent(
    """
    import sys

    import anyio

    from prefrontal.retrieval.embedder import HashingEmbedder
    from prefrontal.stores import MemoryItem, Tenant, sqlite
    from prefrontal.testing.conformance.base import at

    async def main() -> None:
        stores = sqlite.open_stores(sys.argv[1], embedder=HashingEmbedder(int(sys.argv[2])))
        item = MemoryItem(
            item_id="fresh", agent_id="agent-1", user_id="alice",
            content=sys.argv[3], created_at=at(2),
        )
        await stores.episodic.put(item)
        alice = Tenant(agent_id="agent-1", user_id="alice")
        await stores.episodic.delete(alice, ["alices-own"])
        await stores.aclose()

    anyio.run(main)
    """
)


async def test_a_write_by_another_process_is_seen_by_the_next_search(tmp_path: Path) -> None:
    """Items written and deleted by another process show in the next search of a warm store."""
    path = tmp_path / "m.db"
    stores = sqlite.open_stores(path, embedder=_embedder())
    store = _episodic(stores)
    try:
        await store.put_many([*_corpus(200), _secret("alices-own", "agent-1", "alice")])
        before = await _hits(store, ALICE, SECRET)
        assert before[0][0] == "alices-own"
        fresh = "lighthouse keeper telescope inventory"
        command = [sys.executable, "-c", WRITER, str(path), str(DIMENSIONS), fresh]
        with anyio.fail_after(60):
            await anyio.run_process(command)
        after = await _hits(store, ALICE, fresh)
        assert after[0][0] == "fresh"
        assert "alices-own" not in [hit[0] for hit in await _hits(store, ALICE, SECRET)]
        indexed, scanned = await _both_ways(store, ALICE, fresh, 10)
        assert indexed == scanned
    finally:
        await stores.aclose()


async def test_a_file_at_version_4_migrates_and_searches_as_a_new_one(tmp_path: Path) -> None:
    """A schema 4 file gains the change log; its hybrid hits equal a file filled anew."""
    items = _corpus(120)
    fresh = sqlite.open_stores(tmp_path / "fresh.db", embedder=_embedder())
    await fresh.episodic.put_many(items)
    expected = [await _hits(_episodic(fresh), ALICE, text) for text in questions(10)]
    await fresh.aclose()
    old = sqlite.open_stores(tmp_path / "old.db", embedder=_embedder())
    await old.episodic.put_many(items)
    await old.aclose()
    connection = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    to_schema_4(connection)
    connection.execute("PRAGMA user_version = 4")
    connection.close()
    migrated = sqlite.open_stores(tmp_path / "old.db", embedder=_embedder())
    try:
        got = [await _hits(_episodic(migrated), ALICE, text) for text in questions(10)]
        assert got == expected
    finally:
        await migrated.aclose()
    connection = sqlite3.connect(tmp_path / "old.db")
    assert sqlite_migrations.schema_version(connection) == sqlite_migrations.LATEST
    (changes,) = connection.execute("SELECT changes FROM episodic_stats").fetchone()
    connection.close()
    assert changes == 0


def _log(path: Path) -> tuple[int, int, int, int]:
    """The change counter, the pruning horizon, the oldest logged deletion, the log's size."""
    connection = sqlite3.connect(path)
    try:
        changes, pruned = connection.execute(
            "SELECT changes, pruned FROM episodic_stats"
        ).fetchone()
        oldest, size = connection.execute(
            "SELECT min(changed), count(*) FROM episodic_gone"
        ).fetchone()
    finally:
        connection.close()
    return changes, pruned, oldest, size


async def test_the_deletion_log_keeps_only_the_last_changes(tmp_path: Path) -> None:
    """After 12,000 deletions the log holds only those of the last 10,000 changes."""
    stores = sqlite.open_stores(tmp_path / "log.db")
    store = _episodic(stores)
    for round_ in range(4):
        batch = [i.model_copy(update={"item_id": f"r{round_}-{i.item_id}"}) for i in _corpus(3_000)]
        await store.put_many(batch)
        for tenant in (ALICE, BOB):
            await store.erase(tenant)
    await stores.aclose()
    changes, pruned, oldest, size = _log(tmp_path / "log.db")
    assert changes == 24_000
    assert pruned == changes - KEPT_DELETIONS
    assert oldest > pruned
    assert size <= KEPT_DELETIONS < 12_000


async def test_a_reader_behind_the_horizon_reads_every_vector_again(tmp_path: Path) -> None:
    """A store whose vectors predate the pruned log never returns an item deleted since."""
    path = tmp_path / "behind.db"
    reader = sqlite.open_stores(path, embedder=_embedder())
    writer = sqlite.open_stores(path, embedder=_embedder())
    await _episodic(writer).put_many([*_corpus(200), _secret("s1", "agent-1", "alice")])
    assert [h[0] for h in await _hits(_episodic(reader), ALICE, SECRET, 3)][:1] == ["s1"]
    await _episodic(writer).delete(ALICE, ["s1"])
    for round_ in range(5):
        batch = [i.model_copy(update={"item_id": f"x{round_}-{i.item_id}"}) for i in _corpus(2_000)]
        await _episodic(writer).put_many(batch)
        await _episodic(writer).delete(BOB, [i.item_id for i in batch if i.user_id == "bob"])
    _, pruned, _, _ = _log(path)
    assert pruned > 200  # the reader's vectors (seen at change 201) are behind the horizon
    indexed, scanned = await _both_ways(_episodic(reader), ALICE, SECRET, 10)
    await reader.aclose()
    await writer.aclose()
    assert "s1" not in [hit[0] for hit in indexed]
    assert indexed == scanned
