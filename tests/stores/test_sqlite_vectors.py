"""SQLite hybrid search from the vectors held in memory.

The store keeps its vectors in memory, follows other connections' and
processes' writes through the change log, filters by tenant before it
ranks, and gives the hits that reading and scoring every visible vector
gives (``vectors = None``).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from prefrontal.stores import MemoryKind, MemoryQuery, Scope, sqlite
from prefrontal.stores.sqlite import migrations as sqlite_migrations
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.vectors import KEPT_DELETIONS
from prefrontal.testing.synthetic import questions
from tests.conftest import FIXED_NOW
from tests.stores.sqlite_schema import to_schema_4
from tests.stores.vector_corpus import (
    ALICE,
    BOB,
    DIMENSIONS,
    SCANS,
    SECRET,
    both_ways,
    corpus,
    count_full_reads,
    embedder,
    hits,
    secret,
    sqlite_episodic,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per search that read every visible vector instead of the vector files."""
    return count_full_reads(monkeypatch)


@pytest.mark.parametrize("half", SCANS)
@pytest.mark.parametrize("count", [30, 600, 4000])
async def test_hybrid_hits_equal_those_of_scoring_every_vector(
    tmp_path: Path, count: int, half: bool, full_reads: list[int]
) -> None:
    """Hits, scores and signals from the vectors in memory equal those of reading every vector.

    Past a few rows, every search is answered from the vector files (only the
    reference reads every vector).
    """
    stores = sqlite.open_stores(tmp_path / "m.db", embedder=embedder())
    store = sqlite_episodic(stores)
    assert store.vectors is not None
    store.vectors.half = half
    try:
        await store.put_many(corpus(count))
        for text in questions(25):
            for tenant, limit, kinds in (
                (ALICE, 10, None),
                (BOB, 5, None),
                (ALICE, 20, (MemoryKind.TOOL_RESULT,)),
            ):
                before = len(full_reads)
                indexed, scanned = await both_ways(store, tenant, text, limit, kinds)
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
    stores = sqlite.open_stores(tmp_path / "m.db", embedder=embedder())
    store = sqlite_episodic(stores)
    assert store.vectors is not None
    store.vectors.half = half
    twins = [
        secret(f"twin-{n:02d}", ALICE.agent_id, "bob" if n % 2 else "alice").model_copy(
            update={"scope": Scope.SHARED}
        )
        for n in (7, 3, 11, 0, 9, 4, 1, 10, 5, 2, 8, 6)
    ]
    try:
        await store.put_many(corpus(600) + twins)
        for limit in (5, 10, 20):
            indexed, scanned = await both_ways(store, ALICE, SECRET, limit)
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
    stores = sqlite.open_stores(tmp_path / "m.db", embedder=embedder())
    store = sqlite_episodic(stores)
    try:
        await store.put_many(corpus(300))
        await store.put_many(
            [
                secret("bobs-secret", "agent-1", "bob"),
                secret("other-agent", "agent-2", "alice"),
                secret("alices-own", "agent-1", "alice"),
            ]
        )
        query = MemoryQuery(text="", embedding=await _vector(SECRET), limit=40, now=FIXED_NOW)
        found = await store.search(ALICE, query)
        assert found[0].item.item_id == "alices-own"
        assert all(h.item.agent_id == "agent-1" for h in found)
        assert all(h.item.user_id == "alice" or h.item.scope is Scope.SHARED for h in found)
        assert "bobs-secret" in [h.item.item_id for h in await store.search(BOB, query)]
    finally:
        await stores.aclose()


async def _vector(text: str) -> tuple[float, ...]:
    (vector,) = await embedder().embed([text])
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
    stores = sqlite.open_stores(path, embedder=embedder())
    store = sqlite_episodic(stores)
    try:
        await store.put_many([*corpus(200), secret("alices-own", "agent-1", "alice")])
        before = await hits(store, ALICE, SECRET)
        assert before[0][0] == "alices-own"
        fresh = "lighthouse keeper telescope inventory"
        command = [sys.executable, "-c", WRITER, str(path), str(DIMENSIONS), fresh]
        with anyio.fail_after(60):
            await anyio.run_process(command)
        after = await hits(store, ALICE, fresh)
        assert after[0][0] == "fresh"
        assert "alices-own" not in [hit[0] for hit in await hits(store, ALICE, SECRET)]
        indexed, scanned = await both_ways(store, ALICE, fresh, 10)
        assert indexed == scanned
    finally:
        await stores.aclose()


async def test_a_file_at_version_4_migrates_and_searches_as_a_new_one(tmp_path: Path) -> None:
    """A schema 4 file gains the change log; its hybrid hits equal a file filled anew."""
    items = corpus(120)
    fresh = sqlite.open_stores(tmp_path / "fresh.db", embedder=embedder())
    await fresh.episodic.put_many(items)
    expected = [await hits(sqlite_episodic(fresh), ALICE, text) for text in questions(10)]
    await fresh.aclose()
    old = sqlite.open_stores(tmp_path / "old.db", embedder=embedder())
    await old.episodic.put_many(items)
    await old.aclose()
    connection = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    to_schema_4(connection)
    connection.execute("PRAGMA user_version = 4")
    connection.close()
    migrated = sqlite.open_stores(tmp_path / "old.db", embedder=embedder())
    try:
        got = [await hits(sqlite_episodic(migrated), ALICE, text) for text in questions(10)]
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
    store = sqlite_episodic(stores)
    for round_ in range(4):
        batch = [i.model_copy(update={"item_id": f"r{round_}-{i.item_id}"}) for i in corpus(3_000)]
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
    reader = sqlite.open_stores(path, embedder=embedder())
    writer = sqlite.open_stores(path, embedder=embedder())
    await sqlite_episodic(writer).put_many([*corpus(200), secret("s1", "agent-1", "alice")])
    assert [h[0] for h in await hits(sqlite_episodic(reader), ALICE, SECRET, 3)][:1] == ["s1"]
    await sqlite_episodic(writer).delete(ALICE, ["s1"])
    for round_ in range(5):
        batch = [i.model_copy(update={"item_id": f"x{round_}-{i.item_id}"}) for i in corpus(2_000)]
        await sqlite_episodic(writer).put_many(batch)
        await sqlite_episodic(writer).delete(BOB, [i.item_id for i in batch if i.user_id == "bob"])
    _, pruned, _, _ = _log(path)
    assert pruned > 200  # the reader's vectors (seen at change 201) are behind the horizon
    indexed, scanned = await both_ways(sqlite_episodic(reader), ALICE, SECRET, 10)
    await reader.aclose()
    await writer.aclose()
    assert "s1" not in [hit[0] for hit in indexed]
    assert indexed == scanned
