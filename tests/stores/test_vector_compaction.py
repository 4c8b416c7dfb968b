"""Compaction of the SQLite vector files: smaller files, the same hits, readers moved safely.

Deleting most of a store leaves its slots zeroed; compaction (called, or
when the dead slots pass the share) copies the live ones into a new
generation of files and unlinks the old. Hits before and after equal those
of reading every visible vector, also for searches running while another
process compacts, and for a process that had the old files mapped. Slots
follow row ids when SQLite gives a new row the id of a deleted one.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import numpy as np
import pytest

from prefrontal.retrieval.vectors import to_blob
from prefrontal.stores import MemoryItem, MemoryQuery, Scope, Stores, Tenant, sqlite
from prefrontal.stores.sqlite import vector_file
from prefrontal.stores.sqlite.compaction import compact_vectors
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.vector_file import GROWTH, VectorFile
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import memories, questions
from tests.conftest import FIXED_NOW
from tests.stores.vector_corpus import ALICE, BOB, embedder, sqlite_episodic

pytestmark = pytest.mark.anyio
Hit = tuple[str, float, dict[str, float]]


def _items(count: int, prefix: str = "i") -> list[MemoryItem]:
    """Alice's agent's items, every third Bob's own, every fifth shared."""
    out = []
    for n, item in enumerate(memories(count, tenant=ALICE, start=at(0))):
        user = "bob" if n % 3 == 0 else "alice"
        scope = Scope.SHARED if n % 5 == 0 else Scope.PRIVATE
        out.append(
            item.model_copy(update={"item_id": f"{prefix}{n}", "user_id": user, "scope": scope})
        )
    return out


async def _hits(store: SqliteMemoryStore, tenant: Tenant, text: str) -> list[Hit]:
    found = await store.search(tenant, MemoryQuery(text=text, limit=10, now=FIXED_NOW))
    return [(h.item.item_id, h.score, h.signals) for h in found]


async def _scanned(store: SqliteMemoryStore, tenant: Tenant, text: str) -> list[Hit]:
    """The hits of reading and scoring every visible vector (no vector files)."""
    held, store.vectors = store.vectors, None
    try:
        return await _hits(store, tenant, text)
    finally:
        store.vectors = held


def _files(path: Path) -> Path:
    return Path(f"{path}.vectors") / "episodic"


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in _files(path).iterdir() if f.name != "state")


def _generations(path: Path) -> set[str]:
    return {f.suffix for f in _files(path).iterdir() if f.name != "state"}


async def _delete_most(store: SqliteMemoryStore, items: list[MemoryItem], keep: int) -> set[str]:
    """Delete all but every ``keep``-th item (by owner); the ids kept."""
    kept = {item.item_id for n, item in enumerate(items) if n % keep == 0}
    for tenant in (ALICE, BOB):
        doomed = [i.item_id for i in items if i.item_id not in kept and i.user_id == tenant.user_id]
        assert await store.delete(tenant, doomed) == len(doomed)
    return kept


def _by_hand(path: Path) -> tuple[Stores, SqliteMemoryStore]:
    """SQLite stores at ``path`` and their episodic store, whose vector files compact only
    when asked (``compact``)."""
    stores = sqlite.open_stores(path, embedder=embedder())
    store = sqlite_episodic(stores)
    assert store.vectors is not None
    store.vectors.compact_share = None
    return stores, store


async def test_compaction_shrinks_the_files_keeps_the_hits_and_leaves_no_deleted_vector(
    tmp_path: Path,
) -> None:
    """80% deleted: compact() cuts the files to the live rows plus growth room, every hit
    and score is unchanged and equal to exact search, and no deleted vector is in a file."""
    path = tmp_path / "m.db"
    stores = sqlite.open_stores(path, embedder=embedder())
    store = sqlite_episodic(stores)
    vectors = store.vectors
    assert vectors is not None
    vectors.compact_share = None
    texts = questions(12)
    try:
        items = _items(2_000)
        await store.put_many(items)
        stored = await store.get(ALICE, [i.item_id for i in items if i.user_id == "alice"])
        stored += await store.get(BOB, [i.item_id for i in items if i.user_id == "bob"])
        kept = await _delete_most(store, items, keep=5)
        before = {(t, text): await _hits(store, t, text) for t in (ALICE, BOB) for text in texts}
        size_before = _bytes(path)
        assert vectors.usage() == (2_000, 400)
        assert vectors.compact()
        assert vectors.usage() == (400, 400)
        assert not vectors.compact()  # nothing dead left
        # the files hold the live slots and room to grow
        assert _bytes(path) / size_before == (400 + GROWTH) / (2_000 + GROWTH)
        assert _generations(path) == {".1"}
        for (tenant, text), hits in before.items():
            assert await _hits(store, tenant, text) == hits == await _scanned(store, tenant, text)
        assert any(hits for hits in before.values())
    finally:
        await stores.aclose()
    data = b"".join(f.read_bytes() for f in _files(path).iterdir())
    blobs = {i.item_id: to_blob(i.embedding) for i in stored if i.embedding}
    found = _occurrences(data, blobs)
    assert sum(n for key, n in found.items() if key not in kept) == 0
    assert sum(n for key, n in found.items() if key in kept) == len(kept)


def _occurrences(data: bytes, blobs: dict[str, bytes]) -> dict[str, int]:
    """How many times each blob's bytes are in ``data``, at any byte offset.

    A blob starts with its first four bytes, so only the offsets where those are (found
    with numpy at each of the four alignments) are compared whole: one pass over the
    data instead of one per blob.
    """
    firsts = {blob[:4] for blob in blobs.values()}
    wanted = {blob: key for key, blob in blobs.items()}
    width = len(next(iter(wanted)))
    found = dict.fromkeys(blobs, 0)
    starts = np.frombuffer(b"".join(firsts), dtype=np.uint32)
    for align in range(4):
        words = np.frombuffer(data, dtype=np.uint32, offset=align, count=(len(data) - align) // 4)
        for offset in (align + 4 * np.flatnonzero(np.isin(words, starts))).tolist():
            key = wanted.get(data[offset : offset + width])
            if key is not None:
                found[key] += 1
    return found


async def test_the_files_compact_themselves_once_most_slots_are_dead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the share (and the least count) the deletion that crossed it compacts the files;
    a new process opening them maps the compacted generation and ranks as exact search."""
    monkeypatch.setattr(vector_file, "COMPACT_LEAST", 100)
    path = tmp_path / "m.db"
    stores = sqlite.open_stores(path, embedder=embedder())
    store = sqlite_episodic(stores)
    assert store.vectors is not None
    items = _items(1_000)
    await store.put_many(items)
    doomed = [i.item_id for i in items if i.user_id == "alice"][:300]
    await store.delete(ALICE, doomed)  # 30% dead: below the share
    assert store.vectors.compactions == 0
    await store.delete(ALICE, [i.item_id for i in items if i.user_id == "alice"][300:])
    assert store.vectors.compactions == 1
    assert store.vectors.usage() == (334, 334)  # Bob's, every third
    await stores.aclose()
    reopened = sqlite.open_stores(path, embedder=embedder())
    try:
        for text in questions(6):
            assert await _hits(sqlite_episodic(reopened), BOB, text) == await _scanned(
                sqlite_episodic(reopened), BOB, text
            )
    finally:
        await reopened.aclose()


async def test_new_rows_after_the_newest_were_deleted_take_their_row_ids_in_order(
    tmp_path: Path,
) -> None:
    """SQLite gives a new row the highest live row id plus one: after a compaction dropped
    that id and the rows after it died, the dead slots at the end are given up and the new
    rows follow in row id order; the hits stay exact."""
    path = tmp_path / "m.db"
    stores, store = _by_hand(path)
    assert store.vectors is not None
    try:
        items = _items(400)
        await store.put_many(items)
        await store.delete(BOB, [items[99].item_id])  # row id 100, dropped by the compaction
        assert store.vectors.compact()
        assert store.vectors.usage() == (399, 399)
        for tenant in (ALICE, BOB):
            later = [i.item_id for i in items[100:] if i.user_id == tenant.user_id]
            await store.delete(tenant, later)
        assert store.vectors.usage() == (399, 99)
        await store.put_many(_items(50, prefix="late"))  # row ids 100 to 149
        assert store.vectors.usage() == (149, 149)
        for text in [*questions(6), "late"]:
            for tenant in (ALICE, BOB):
                assert await _hits(store, tenant, text) == await _scanned(store, tenant, text)
    finally:
        await stores.aclose()


def _row(rowid: int, vector: np.ndarray) -> tuple[object, ...]:
    """A changed row as the files read it: row id, agent, user, shared, kind, until, dead,
    the vector."""
    return (rowid, "agent-1", "alice", 1, "note", 2**62, 0, vector.astype(np.float32).tobytes())


def test_a_row_id_below_a_live_slot_is_not_placed_out_of_order(tmp_path: Path) -> None:
    """A new row whose id is below a live slot's (an id given explicitly) is refused by the
    in-place update (the caller rebuilds from the rows); one after a dead tail is placed."""
    database = tmp_path / "m.db"
    database.touch()
    files = VectorFile(database, "episodic")
    state = files._open_state()
    files._clear(state)
    vectors = np.random.default_rng(7).standard_normal((12, 8))
    assert files._apply(state, [], [_row(n, vectors[n]) for n in range(1, 11)])
    assert not files._apply(state, [], [_row(0, vectors[0])])  # below the live row 1
    assert files._apply(state, [9, 10], [])
    assert files._apply(state, [], [_row(9, vectors[11])])  # its dead slot, written again
    assert files.compact()  # drops row 10's slot
    assert files._apply(state, [9], [])
    assert files._apply(state, [], [_row(8, vectors[8]), _row(9, vectors[9])])
    mapped = files._mapped(state)
    assert mapped is not None
    assert mapped.keys(np.arange(mapped.size)).tolist() == list(range(1, 10))
    assert np.allclose(mapped.matrix[mapped.slots(np.asarray([9]))[0]], vectors[9])
    assert mapped.slots(np.asarray([10, 3])).tolist() == [-1, 2]
    files.close()


COMPACTOR = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from prefrontal.stores.sqlite.vector_file import VectorFile

    files = VectorFile(Path(sys.argv[1]), "episodic")
    print("compacted" if files.compact() else "not compacted", flush=True)
    files.close()
    """
)


@pytest.mark.parametrize("where", ["another process", "this process"])
async def test_searches_during_a_compaction_elsewhere_stay_exact(
    tmp_path: Path, where: str
) -> None:
    """Searches running while another process (or a thread of this one) compacts the files,
    from a store that had the old generation mapped, give exactly the hits of exact search."""
    path = tmp_path / "m.db"
    stores, store = _by_hand(path)
    assert store.vectors is not None
    texts = questions(8)
    try:
        items = _items(3_000)
        await store.put_many(items)
        await _delete_most(store, items, keep=5)
        expected = {text: await _scanned(store, ALICE, text) for text in texts}
        for text in texts:  # the old generation mapped
            assert await _hits(store, ALICE, text) == expected[text]
        said: list[bytes] = []
        rounds = [0]

        async def compact() -> None:
            if where == "this process":
                assert store.vectors is not None
                said.append(
                    b"compacted" if await anyio.to_thread.run_sync(store.vectors.compact) else b""
                )
                return
            command = [sys.executable, "-c", COMPACTOR, str(path)]
            with anyio.fail_after(60):
                said.append((await anyio.run_process(command)).stdout)

        async def search() -> None:
            while not said or rounds[0] < 2:
                for text in texts:
                    assert await _hits(store, ALICE, text) == expected[text]
                rounds[0] += 1

        async with anyio.create_task_group() as group:
            group.start_soon(search)
            group.start_soon(compact)
        assert said[0].startswith(b"compacted")
        assert _generations(path) == {".1"}
        assert store.vectors.usage() == (600, 600)
    finally:
        await stores.aclose()


async def test_a_rebuild_writes_a_new_generation_and_unlinks_the_old(tmp_path: Path) -> None:
    """Files of an older layout, or marked half changed, are rebuilt densely into a new
    generation; the other generation's files are gone."""
    path = tmp_path / "m.db"
    stores, store = _by_hand(path)
    assert store.vectors is not None
    items = _items(600)
    await store.put_many(items)
    await _delete_most(store, items, keep=3)
    await stores.aclose()
    assert _generations(path) == {".0"}
    state = np.memmap(_files(path) / "state", dtype=np.int64, mode="r+", shape=(12,))
    state[3] = 1  # changing: as a process killed mid-change leaves it
    state.flush()
    del state
    reopened = sqlite.open_stores(path, embedder=embedder())
    try:
        for text in questions(4):
            hits = await _hits(sqlite_episodic(reopened), ALICE, text)
            assert hits == await _scanned(sqlite_episodic(reopened), ALICE, text)
        vectors = sqlite_episodic(reopened).vectors
        assert vectors is not None and vectors.usage() == (200, 200)
        assert _generations(path) == {".1"}
    finally:
        await reopened.aclose()
    with sqlite3.connect(path) as connection:
        (count,) = connection.execute("SELECT count(*) FROM episodic_items").fetchone()
    assert count == 200


async def test_maintenance_compacts_the_stores_with_dead_slots_and_creates_no_files(
    tmp_path: Path,
) -> None:
    """compact_vectors (run by ``erase --vacuum``) compacts the files holding dead slots, and
    leaves a store without vector files without any."""
    path = tmp_path / "m.db"
    stores, store = _by_hand(path)
    assert store.vectors is not None
    try:
        items = _items(300)
        await store.put_many(items)
        assert await compact_vectors(stores) == []  # nothing dead
        await store.delete(BOB, [i.item_id for i in items if i.user_id == "bob"][:20])
        assert await compact_vectors(stores) == ["episodic"]
        assert store.vectors.usage() == (280, 280)
        assert not (Path(f"{path}.vectors") / "semantic").exists()
        for text in questions(4):
            assert await _hits(store, BOB, text) == await _scanned(store, BOB, text)
    finally:
        await stores.aclose()
