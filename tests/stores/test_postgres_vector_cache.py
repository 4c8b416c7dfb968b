"""PostgreSQL hybrid search from the process's vector cache (and its files).

The cache gives the hits that reading and scoring every visible vector
gives (``vector_cache=False``); follows other connections' writes and
deletions through the change log, including a transaction that took its
id before the cache's snapshot and committed after it; filters by tenant
inside the search; keeps its files private, maps them in a fresh process
without reading every vector, rebuilds them on doubt (a real process killed
with SIGKILL while applying a change included), and overwrites an erased or
forgotten row's vector bytes in them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from prefrontal.retrieval.vectors import to_blob
from prefrontal.stores import MemoryItem, MemoryQuery, Scope, Stores, Tenant, postgres
from prefrontal.stores.capabilities import ranked_search
from prefrontal.stores.postgres import memory as postgres_memory
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.vector_cache import VectorCache
from prefrontal.stores.postgres.vector_log import KEPT_DELETIONS, PRUNE_EVERY
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import questions
from tests.benchmarks.child import ROOT, environment
from tests.conftest import FIXED_NOW
from tests.stores.postgres_schema import schema_connection, to_schema_10
from tests.stores.vector_corpus import (
    ALICE,
    BOB,
    SCANS,
    SECRET,
    Hit,
    both_ways,
    corpus,
    embedder,
    hits,
    secret,
)

pytestmark = pytest.mark.anyio


def _open(dsn: str, schema: str, cache: Path | bool = True) -> Stores:
    return postgres.open_stores(
        dsn, schema=schema, embedder=embedder(), max_size=4, vector_cache=cache
    )


def _episodic(stores: Stores) -> PostgresMemoryStore:
    store = stores.episodic
    assert isinstance(store, PostgresMemoryStore)
    return store


def _cache(store: PostgresMemoryStore) -> VectorCache:
    assert store.vectors is not None
    return store.vectors


async def _filled(
    dsn: str, schema: str, count: int, root: Path | None = None
) -> tuple[list[Hit], int]:
    """Write ``count`` corpus items from stores of their own (closed after).

    With a cache directory ``root``, search once too (building the files): Alice's hits for
    the secret and how many times the search rebuilt the cache; without, no search.
    """
    stores = _open(dsn, schema, cache=False if root is None else root)
    try:
        store = _episodic(stores)
        await store.put_many(corpus(count))
        if root is None:
            return [], 0
        return await hits(store, ALICE, SECRET), _cache(store).rebuilds
    finally:
        await stores.aclose()


@pytest.fixture
async def opened(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[Stores]:
    stores = _open(postgres_dsn, postgres_schema)
    yield stores
    await stores.aclose()


async def _built(opened: Stores, count: int) -> PostgresMemoryStore:
    """``opened``'s episodic store holding ``count`` corpus items, its cache built by a search."""
    store = _episodic(opened)
    await store.put_many(corpus(count))
    await hits(store, ALICE, SECRET)
    return store


@pytest.fixture
def scanned_every_row(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the searches that read every visible vector (the path without the cache)."""
    calls: list[int] = []

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return await ranked_search(*args, **kwargs)

    monkeypatch.setattr(postgres_memory, "ranked_search", counted)
    return calls


@pytest.mark.parametrize("half", SCANS)
@pytest.mark.parametrize("count", [30, 600])
async def test_hybrid_hits_equal_those_of_scoring_every_vector(
    opened: Stores, count: int, half: bool
) -> None:
    """Hits, scores and signals from the cache equal those of reading every vector."""
    store = _episodic(opened)
    _cache(store).half = half
    await store.put_many(corpus(count))
    for text in questions(25):
        for tenant, limit in ((ALICE, 10), (BOB, 5)):
            cached, scanned = await both_ways(store, tenant, text, limit)
            assert cached == scanned
    assert _cache(store).rebuilds == 1


async def test_searches_use_the_cache_and_follow_writes_and_deletions(
    postgres_dsn: str, postgres_schema: str, opened: Stores, scanned_every_row: list[int]
) -> None:
    """Another process's writes and deletions show in the next search, applied from the log."""
    store = _episodic(opened)
    await store.put_many([*corpus(300), secret("alices-own", "agent-1", "alice")])
    assert (await hits(store, ALICE, SECRET))[0][0] == "alices-own"
    other = _open(postgres_dsn, postgres_schema, cache=False)
    try:
        fresh = "lighthouse keeper telescope inventory"
        await other.episodic.put(secret("fresh", "agent-1", "alice", fresh))
        await other.episodic.delete(ALICE, ["alices-own"])
        expired = corpus(300)[1].model_copy(update={"valid_until": at(0)})
        await other.episodic.put(expired)
    finally:
        await other.aclose()
    assert (await hits(store, ALICE, fresh))[0][0] == "fresh"
    assert "alices-own" not in [hit[0] for hit in await hits(store, ALICE, SECRET)]
    assert _cache(store).rebuilds == 1
    assert _cache(store).updates >= 1  # from the log; other commits may add updates
    assert scanned_every_row == []
    for text in [fresh, SECRET, *questions(5)]:
        cached, scanned = await both_ways(store, ALICE, text, 10)
        assert cached == scanned


async def test_a_transaction_committed_after_the_cache_moved_on_is_not_missed(
    postgres_dsn: str, postgres_schema: str, opened: Stores
) -> None:
    """A write whose transaction began before the cache's snapshot and committed after it."""
    store = await _built(opened, 100)
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        transaction = connection.transaction()
        await transaction.start()
        row = postgres_memory._row(secret("late", "agent-1", "alice"), "episodic")
        row = (*row[:17], to_blob((await embedder().embed([SECRET]))[0]), *row[18:])
        await connection.execute(store._sql.upsert, *row)
        meanwhile = secret("meanwhile", "agent-2", "alice", "walrus tusk ivory")
        await store.put(meanwhile)  # another agent: its statistics row is not the one held
        other = Tenant(agent_id="agent-2", user_id="alice")
        assert (await hits(store, other, "walrus tusk ivory"))[0][0] == "meanwhile"
        assert _cache(store).updates >= 1  # the cache moved on past the open transaction
        await transaction.commit()
    assert (await hits(store, ALICE, SECRET))[0][0] == "late"
    cached, scanned = await both_ways(store, ALICE, SECRET, 10)
    assert cached == scanned


async def test_private_vectors_of_others_are_never_returned_even_when_nearest(
    opened: Stores, scanned_every_row: list[int]
) -> None:
    """Another agent's and another user's private items are left out inside the vector search."""
    store = _episodic(opened)
    await store.put_many(corpus(300))
    await store.put_many(
        [
            secret("bobs-secret", "agent-1", "bob"),
            secret("other-agent", "agent-2", "alice"),
            secret("alices-own", "agent-1", "alice"),
        ]
    )
    (vector,) = await embedder().embed([SECRET])
    query = MemoryQuery(text="", embedding=vector, limit=40, now=FIXED_NOW)
    found = await store.search(ALICE, query)
    assert found[0].item.item_id == "alices-own"
    assert all(h.item.agent_id == "agent-1" for h in found)
    assert all(h.item.user_id == "alice" or h.item.scope is Scope.SHARED for h in found)
    assert "bobs-secret" in [h.item.item_id for h in await store.search(BOB, query)]
    assert scanned_every_row == []


async def test_files_are_private_and_a_new_process_maps_them_without_reading_every_vector(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> None:
    """The directory is 0700 and each file 0600; a fresh store maps them, rebuilding nothing."""
    root = tmp_path / "cache"
    expected, rebuilds = await _filled(postgres_dsn, postgres_schema, 200, root)
    assert rebuilds == 1
    (directory,) = root.iterdir()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert {f.name for f in directory.iterdir()} >= {"state", "snapshot", "matrix.0", "half.0"}
    for file in directory.iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file.name
    second = _open(postgres_dsn, postgres_schema, root)
    try:
        store = _episodic(second)
        assert await hits(store, ALICE, SECRET) == expected
        assert _cache(store).rebuilds == 0
        updates = _cache(store).updates  # any commit in the cluster may advance the snapshot
        await store.put(secret("new", "agent-1", "alice"))
        assert (await hits(store, ALICE, SECRET))[0][0] == "new"
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
        items = corpus(120)
        await _episodic(searcher).put_many(items)
        await hits(_episodic(searcher), ALICE, SECRET)
        (directory,) = root.iterdir()
        embedded = await embedder().embed([searchable(item) for item in items])
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
    expected, _ = await _filled(postgres_dsn, postgres_schema, 100, root)
    (directory,) = root.iterdir()
    for word, value in ((3, 1), (8, 12345)):  # the changing flag; the table's identity
        state = np.memmap(directory / "state", dtype=np.int64, mode="r+", shape=(12,))
        state[word] = value
        state.flush()
        del state
        reopened = _open(postgres_dsn, postgres_schema, root)
        try:
            assert await hits(_episodic(reopened), ALICE, SECRET) == expected
            assert _cache(_episodic(reopened)).rebuilds == 1
        finally:
            await reopened.aclose()


async def test_a_cache_older_than_the_deletion_log_is_rebuilt(
    postgres_dsn: str, postgres_schema: str, opened: Stores
) -> None:
    """Once the log's horizon passes the cache's snapshot, the next search reads every row."""
    store = await _built(opened, 100)
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        await connection.execute(
            "INSERT INTO episodic_gone_horizon (horizon) VALUES (pg_current_xact_id())"
        )
    await store.put(secret("new", "agent-1", "alice"))
    assert (await hits(store, ALICE, SECRET))[0][0] == "new"
    assert _cache(store).rebuilds == 2


async def test_the_deletion_log_is_pruned_past_its_length(
    postgres_dsn: str, postgres_schema: str, opened: Stores
) -> None:
    """Past the kept deletions, the log drops its oldest entries and records the horizon."""
    store = await _built(opened, 10)
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        assert await store.erase(ALICE) == 6  # logged under the first numbers
        sequence = "pg_get_serial_sequence('episodic_gone', 'seq')"
        await connection.execute(f"SELECT setval({sequence}, {KEPT_DELETIONS + PRUNE_EVERY - 2})")
        assert await store.erase(BOB) == 4  # the log's count passes a multiple of PRUNE_EVERY
        kept = await connection.fetchval("SELECT count(*) FROM episodic_gone")
        horizons = await connection.fetchval("SELECT count(*) FROM episodic_gone_horizon")
    assert kept == 4
    assert horizons == 1


async def test_a_schema_at_version_10_gains_slots_and_stamps_and_searches_as_a_new_one(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Migration 11 numbers the existing rows; the cache then reads them all once."""
    await _filled(postgres_dsn, postgres_schema, 200)
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        await to_schema_10(connection)
        await connection.execute("DELETE FROM schema_migrations WHERE version > 10")
    stores = _open(postgres_dsn, postgres_schema)
    try:
        store = _episodic(stores)
        for text in questions(5):
            cached, scanned = await both_ways(store, ALICE, text, 10)
            assert cached == scanned
        assert _cache(store).rebuilds == 1
    finally:
        await stores.aclose()


async def test_opening_ahead_builds_the_cache_before_the_first_search(
    postgres_dsn: str, postgres_schema: str, scanned_every_row: list[int]
) -> None:
    """``Stores.open`` (what the orchestrator calls at start-up) brings the cache up to date."""
    await _filled(postgres_dsn, postgres_schema, 200)
    stores = _open(postgres_dsn, postgres_schema)
    try:
        store = _episodic(stores)
        await stores.open()
        assert _cache(store).rebuilds == 1
        await hits(store, ALICE, SECRET)
        assert (_cache(store).rebuilds, _cache(store).updates) == (1, 0)
        assert scanned_every_row == []
    finally:
        await stores.aclose()


CRASHING_SEARCHER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path

    import anyio

    from prefrontal.stores import postgres
    from prefrontal.stores.postgres.vector_cache import VectorCache
    from tests.stores.vector_corpus import ALICE, SECRET, corpus, embedder, hits, secret

    original = VectorCache._write

    def half_then_stall(self, at, held):
        original(self, at[: len(at) // 2], held[: len(held) // 2])
        print("half written", flush=True)
        time.sleep(600)

    async def main() -> None:
        dsn, schema, root = sys.argv[1:4]
        stores = postgres.open_stores(
            dsn, schema=schema, embedder=embedder(), max_size=2, vector_cache=Path(root)
        )
        store = stores.episodic
        await store.put_many(corpus(300))
        await hits(store, ALICE, SECRET)  # builds the files
        late = [secret(f"late{n}", "agent-1", "alice", f"{SECRET} {n}") for n in range(40)]
        await store.put_many(late)  # committed; the cache applies it at its next use
        VectorCache._write = half_then_stall
        # committed, then the cache applies the puts and zeroes the deleted: killed in it
        await store.delete(ALICE, [item.item_id for item in corpus(300)[1:60:3]])

    anyio.run(main)
    """
)


async def test_a_process_killed_while_applying_a_change_leaves_the_files_rebuilt(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> None:
    """SIGKILL in the middle of applying committed puts and deletions to the files: the state
    stays marked changing; a fresh process rebuilds and ranks exactly as reading every row."""
    root = tmp_path / "cache"
    command = [sys.executable, "-c", CRASHING_SEARCHER, postgres_dsn, postgres_schema, str(root)]
    process = await anyio.open_process(command, cwd=ROOT, env=environment(None))
    try:
        assert process.stdout is not None and process.stderr is not None
        with anyio.fail_after(60):
            said = b""
            with contextlib.suppress(anyio.EndOfStream):
                said = await process.stdout.receive()
        if not said.startswith(b"half written"):
            with anyio.fail_after(30):
                await process.wait()
            error = b"".join([chunk async for chunk in process.stderr])
            ended = f"the child ended ({process.returncode}) before the change"
            pytest.fail(f"{ended}: {error.decode()[-2000:]}")
        os.kill(process.pid, signal.SIGKILL)
        with anyio.fail_after(30):
            await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
        await process.aclose()
    assert process.returncode == -signal.SIGKILL
    (directory,) = root.iterdir()
    assert np.fromfile(directory / "state", dtype=np.int64)[3] == 1  # changing, never cleared
    stores = _open(postgres_dsn, postgres_schema, root)
    try:
        store = _episodic(stores)
        for text in [SECRET, f"{SECRET} 39", *questions(8)]:
            for tenant in (ALICE, BOB):
                cached, scanned = await both_ways(store, tenant, text, 10)
                assert cached == scanned
        assert _cache(store).rebuilds == 1
        found = [hit[0] for hit in await hits(store, ALICE, SECRET, limit=60)]
        assert {f"late{n}" for n in range(40)} <= set(found)
        deleted = {item.item_id for item in corpus(300)[1:60:3]}
        assert not deleted & {hit[0] for hit in await hits(store, ALICE, "", limit=400)}
        assert np.fromfile(directory / "state", dtype=np.int64)[3] == 0
    finally:
        await stores.aclose()
