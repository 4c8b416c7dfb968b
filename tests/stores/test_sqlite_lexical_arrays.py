"""SQLite's postings as arrays in the process: the in-memory ranking, kept in step with the file."""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from prefrontal.memory.api import MemoryAPI
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.retrieval.ranking import query_terms
from prefrontal.stores.long_term import MemoryItem, MemoryKind, MemoryQuery
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.sqlite import memory_sql, open_stores, topk
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.lexical_arrays import LexicalArrays, segments_of, whole_table
from prefrontal.stores.tenancy import Scope, Tenant
from tests.conftest import fixed_clock
from tests.stores.ranked_alike import assert_ranked_alike, random_queries

NOW = datetime(2026, 2, 1, tzinfo=UTC)
WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime", "quince", "yuzu", "sloe", "medlar"]
TENANTS = [Tenant(agent_id=a, user_id=u) for a in ("a1", "a2") for u in ("alice", "bob", "cy")]


def corpus(rng: random.Random, count: int, prefix: str = "i") -> list[MemoryItem]:
    """``count`` items over :data:`TENANTS`, shared or private, of two kinds, some expiring."""
    items = []
    for i in range(count):
        tenant = rng.choice(TENANTS)
        words = rng.choices(WORDS, k=rng.randint(1, 6)) + ["filler"] * rng.choice([0, 3, 20])
        items.append(
            MemoryItem(
                item_id=f"{prefix}{i:04d}",
                agent_id=tenant.agent_id,
                user_id=tenant.user_id,
                scope=rng.choice([Scope.SHARED, Scope.PRIVATE]),
                kind=rng.choice([MemoryKind.EVENT, MemoryKind.FACT]),
                content=" ".join(words),
                created_at=NOW - timedelta(days=2),
                valid_until=rng.choice([None, None, NOW - timedelta(days=1)]),
            )
        )
    return items


async def changed(rng: random.Random, items: list[MemoryItem], stores: list[object]) -> None:
    """Rewrite, re-scope, supersede and delete some of ``items`` in each of ``stores`` alike."""
    rewritten = [
        item.model_copy(update={"content": " ".join(rng.choices(WORDS, k=3)), "scope": scope})
        for item in rng.sample(items, 40)
        for scope in [rng.choice([Scope.SHARED, Scope.PRIVATE])]
    ]
    newer = [
        item.model_copy(update={"item_id": f"{item.item_id}-v2", "supersedes": item.item_id})
        for item in rng.sample(items, 20)
    ]
    gone = rng.sample(items, 60)
    for store in stores:
        await store.put_many(rewritten)  # type: ignore[attr-defined]
        await store.put_many(newer)  # type: ignore[attr-defined]
        for item in gone:
            tenant = Tenant(agent_id=item.agent_id, user_id=item.user_id)
            await store.delete(tenant, [item.item_id])  # type: ignore[attr-defined]


async def built(store: object) -> LexicalArrays:
    """``store``'s arrays, read from its table now (in their own thread) and waited for."""
    arrays = store.lexical  # type: ignore[attr-defined]
    assert isinstance(arrays, LexicalArrays)
    arrays.start()
    await store.lexical_ready()  # type: ignore[attr-defined]
    assert arrays.changes >= 0
    return arrays


@pytest.mark.anyio
async def test_arrays_and_the_fts5_walk_rank_as_the_in_memory_store(tmp_path: Path) -> None:
    """Every tenant, kinds and limits, after rewrites, re-scoping, supersession and deletions:
    the arrays and the FTS5 walk both give the in-memory store's hits, order and scores."""
    rng = random.Random(5)
    items = corpus(rng, 700)
    memory, stores = InMemoryMemoryStore(), open_stores(tmp_path / "arrays.db")
    walking = open_stores(tmp_path / "arrays.db", lexical_arrays=False)
    assert walking.episodic.lexical is None  # type: ignore[attr-defined]
    await memory.put_many(items)
    await stores.episodic.put_many(items)
    await built(stores.episodic)
    queries = random_queries(rng, WORDS, (1, 5, 40, 300), 30, NOW)
    queries += [q.model_copy(update={"kinds": [MemoryKind.FACT]}) for q in queries[:10]]
    for tenant in TENANTS:
        await assert_ranked_alike(memory, stores.episodic, tenant, queries)
    await changed(rng, items, [memory, stores.episodic])
    for tenant in TENANTS:
        await assert_ranked_alike(memory, stores.episodic, tenant, queries)
        await assert_ranked_alike(memory, walking.episodic, tenant, queries)
    await stores.aclose()
    await walking.aclose()


@pytest.mark.anyio
async def test_another_process_writes_show_at_the_next_search(tmp_path: Path) -> None:
    """Writes and deletions through another opening of the file, compaction of stale postings
    and a change log pruned past the arrays' count all leave the in-memory ranking."""
    rng = random.Random(9)
    items = corpus(rng, 300)
    memory, reader = InMemoryMemoryStore(), open_stores(tmp_path / "shared.db")
    writer = open_stores(tmp_path / "shared.db")
    await memory.put_many(items)
    await writer.episodic.put_many(items)
    queries = random_queries(rng, WORDS, (3, 50), 20, NOW)
    await built(reader.episodic)
    await assert_ranked_alike(memory, reader.episodic, TENANTS[0], queries)
    more = corpus(rng, 1500, prefix="m")
    for store in (memory, writer.episodic):
        await store.put_many(more)
        for item in more[:1400]:  # enough stale entries to compact the postings
            await store.delete(Tenant(agent_id=item.agent_id, user_id=item.user_id), [item.item_id])
    await changed(rng, items, [memory, writer.episodic])
    for tenant in TENANTS:
        await assert_ranked_alike(memory, reader.episodic, tenant, queries)
    arrays = reader.episodic.lexical  # type: ignore[attr-defined]
    assert isinstance(arrays, LexicalArrays)
    late = corpus(rng, 1, prefix="late")[0]
    await writer.episodic.put(late)
    await memory.put(late)
    with sqlite3.connect(tmp_path / "shared.db") as connection:  # the log no longer covers it
        connection.execute("UPDATE episodic_stats SET pruned = changes")
    await assert_ranked_alike(memory, reader.episodic, TENANTS[0], queries)  # walks, reads again
    await reader.episodic.lexical_ready()  # type: ignore[attr-defined]
    assert arrays.changes >= 0
    for tenant in TENANTS:
        await assert_ranked_alike(memory, reader.episodic, tenant, queries)
    await reader.aclose()
    await writer.aclose()


@pytest.mark.anyio
async def test_a_search_older_than_the_arrays_walks_fts5_in_its_own_snapshot(
    tmp_path: Path,
) -> None:
    """A transaction that began before a deletion the arrays already hold still finds the item,
    as its snapshot has it, by walking FTS5's postings."""
    path = tmp_path / "snapshot.db"
    stores = open_stores(path)
    item = MemoryItem(item_id="x", agent_id="a1", user_id="alice", content="quince jam")
    await stores.episodic.put(item)
    await stores.aclose()
    statements = memory_sql.Statements("episodic")
    params = {"agent": "a1", "user": "alice", "now": 0, "kinds": None}
    arrays, texts = LexicalArrays("episodic"), query_terms("quince")
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("BEGIN")
    assert topk.by_rowid(old, statements, params, texts, 5, arrays)[0]  # arrays at count n
    newer = sqlite3.connect(path, isolation_level=None)
    newer.execute("DELETE FROM episodic_items WHERE item_id = 'x'")
    newer.execute("BEGIN")
    assert topk.by_rowid(newer, statements, params, texts, 5, arrays)[0] == {}
    assert arrays.current(old) is False  # the arrays hold the deletion, the old snapshot not
    found = topk.by_rowid(old, statements, params, texts, 5, arrays)[0]
    assert list(found) == [1]
    old.execute("COMMIT")
    newer.execute("COMMIT")


@pytest.mark.anyio
async def test_hybrid_search_over_the_arrays_ranks_as_walking_fts5(tmp_path: Path) -> None:
    """Fused BM25 and cosine over the arrays (contenders outside the BM25 top scored from them)
    give the hits, order and scores of walking FTS5, and the in-memory store's hits and order
    (its array fusion may round a score's last bit apart)."""
    rng = random.Random(13)
    items = corpus(rng, 900)
    embedder = HashingEmbedder(64)
    memory = InMemoryMemoryStore(embedder=embedder)
    stores = open_stores(tmp_path / "hybrid.db", embedder=embedder)
    walking = open_stores(tmp_path / "hybrid.db", embedder=embedder)
    walking.episodic.lexical = None  # type: ignore[attr-defined]
    await memory.put_many(items)
    await stores.episodic.put_many(items)
    await built(stores.episodic)
    queries = random_queries(rng, WORDS, (1, 5, 40), 25, NOW)
    for tenant in TENANTS[:3]:
        await assert_ranked_alike(walking.episodic, stores.episodic, tenant, queries)
        for query in queries:
            got = await stores.episodic.search(tenant, query)
            want = await memory.search(tenant, query)
            assert [h.item.item_id for h in got] == [h.item.item_id for h in want]
            assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-12)
    await stores.aclose()
    await walking.aclose()


@pytest.mark.anyio
async def test_an_erase_leaves_no_word_of_the_user_in_the_arrays(tmp_path: Path) -> None:
    """Erasing a user empties the arrays of every word, theirs included, and the next search
    reads the table again and ranks as the in-memory store does."""
    stores = open_stores(tmp_path / "erase.db")
    memory = InMemoryMemoryStore()
    secret = MemoryItem(item_id="s", agent_id="a1", user_id="bob", content="zanzibar quince")
    kept = MemoryItem(item_id="k", agent_id="a1", user_id="alice", content="quince jam")
    for store in (memory, stores.episodic):
        await store.put_many([secret, kept])
    query = MemoryQuery(text="quince zanzibar", limit=5, now=NOW)
    arrays = await built(stores.episodic)
    await assert_ranked_alike(memory, stores.episodic, TENANTS[1], [query])
    assert any("zanzibar" in s.postings for s in arrays.segments.values())
    await MemoryAPI(stores, clock=fixed_clock).erase("a1", "bob")
    await memory.erase(Tenant(agent_id="a1", user_id="bob"))
    assert not arrays.segments and arrays.changes == -1
    await assert_ranked_alike(memory, stores.episodic, TENANTS[0], [query])
    await stores.episodic.lexical_ready()  # type: ignore[attr-defined]
    assert arrays.changes >= 0
    await assert_ranked_alike(memory, stores.episodic, TENANTS[0], [query])
    assert not any("zanzibar" in s.postings for s in arrays.segments.values())
    await stores.aclose()


class HeldBuild:
    """Holds every table read of :class:`LexicalArrays` until :attr:`go` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.go, self.reading = threading.Event(), threading.Event()
        read = LexicalArrays._read

        def held(arrays: LexicalArrays, connection: sqlite3.Connection) -> Any:
            self.reading.set()
            assert self.go.wait(30)
            return read(arrays, connection)

        monkeypatch.setattr(LexicalArrays, "_read", held)


@pytest.mark.anyio
async def test_searches_walk_while_the_arrays_are_read_and_use_them_once_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the table is read into arrays in its thread, searches answer as the in-memory
    store does by walking FTS5; once read, they use the arrays."""
    rng = random.Random(17)
    items = corpus(rng, 300)
    memory = InMemoryMemoryStore()
    await memory.put_many(items)
    writer = open_stores(tmp_path / "lazy.db", lexical_arrays=False)
    await writer.episodic.put_many(items)
    await writer.aclose()
    hold = HeldBuild(monkeypatch)
    stores = open_stores(tmp_path / "lazy.db")
    arrays = stores.episodic.lexical  # type: ignore[attr-defined]
    arrays.start()
    assert hold.reading.wait(30)  # the read runs in its own thread
    queries = random_queries(rng, WORDS, (1, 10), 10, NOW)
    await assert_ranked_alike(memory, stores.episodic, TENANTS[0], queries)
    assert arrays.changes == -1 and not arrays.segments  # walked: nothing read yet
    hold.go.set()
    await stores.episodic.lexical_ready()  # type: ignore[attr-defined]
    assert arrays.changes >= 0 and arrays.segments
    await assert_ranked_alike(memory, stores.episodic, TENANTS[0], queries)
    await stores.aclose()


@pytest.mark.anyio
async def test_a_read_begun_before_an_erase_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Arrays read from a snapshot taken before an erase emptied them are never installed:
    the erased user's words do not come back; the next search reads the table again."""
    stores = open_stores(tmp_path / "erase-race.db")
    secret = MemoryItem(item_id="s", agent_id="a1", user_id="bob", content="zanzibar quince")
    await stores.episodic.put(secret)
    hold = HeldBuild(monkeypatch)
    arrays = stores.episodic.lexical  # type: ignore[attr-defined]
    arrays.start()
    assert hold.reading.wait(30)
    await MemoryAPI(stores, clock=fixed_clock).erase("a1", "bob")
    hold.go.set()
    await stores.episodic.lexical_ready()  # type: ignore[attr-defined]
    assert arrays.changes == -1 and not arrays.segments
    await stores.aclose()


@pytest.mark.anyio
async def test_closing_waits_for_the_arrays_being_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing the stores waits for the thread reading the table: none outlives them."""
    stores = open_stores(tmp_path / "close.db")
    await stores.episodic.put(MemoryItem(item_id="x", agent_id="a1", user_id="u", content="fig"))
    hold = HeldBuild(monkeypatch)
    arrays = stores.episodic.lexical  # type: ignore[attr-defined]
    arrays.start()
    assert hold.reading.wait(30)
    threading.Timer(0.2, hold.go.set).start()
    await stores.aclose()
    assert arrays._builder is not None and not arrays._builder.is_alive()
    assert arrays.changes >= 0


def test_the_whole_table_read_at_once_holds_what_reading_row_by_row_does(tmp_path: Path) -> None:
    """Segments, slots' columns and every term's postings read set-wise from the whole table
    are those the row-by-row path builds, item for item (tenants, scopes, kinds, expiry,
    supersession, repeated terms, items without terms)."""
    rng = random.Random(21)
    items = corpus(rng, 600)
    items += [
        MemoryItem(item_id="empty", agent_id="a1", user_id="cy", content="the a of"),
        items[0].model_copy(update={"item_id": "newer", "supersedes": items[0].item_id}),
    ]

    async def fill() -> None:
        stores = open_stores(tmp_path / "whole.db", lexical_arrays=False)
        await stores.episodic.put_many(items)
        await stores.aclose()

    anyio.run(fill)
    connection = sqlite3.connect(tmp_path / "whole.db", isolation_level=None)
    connection.execute("BEGIN")
    arrays = LexicalArrays("episodic")
    table = connection.execute(arrays._table).fetchone()
    parts = whole_table(table)
    assert parts is not None
    segments, where = segments_of(parts)
    arrays._put(connection.execute(arrays._all))
    connection.execute("COMMIT")
    assert where == arrays.where and set(segments) == set(arrays.segments)
    for place, segment in segments.items():
        other = arrays.segments[place]
        assert segment.entries == other.entries and len(segment) == len(other)
        for rowid, slot in segment.slots.items():
            mine, theirs = (segment, slot), (other, other.slots[rowid])
            for column in ("dead", "until", "length", "distinct"):
                assert getattr(mine[0], column)[mine[1]] == getattr(theirs[0], column)[theirs[1]]
            kind = {code: name for name, code in segment.kinds.items()}[segment.kind[slot]]
            assert kind == {c: n for n, c in other.kinds.items()}[other.kind[theirs[1]]]
        assert set(segment.postings) == set(other.postings)
        for term, posting in segment.postings.items():
            theirs_ = other.postings[term]
            held = dict(
                zip(
                    segment.rowids[posting.slots[: posting.n]].tolist(),
                    posting.counts[: posting.n].tolist(),
                    strict=True,
                )
            )
            want = dict(
                zip(
                    other.rowids[theirs_.slots[: theirs_.n]].tolist(),
                    theirs_.counts[: theirs_.n].tolist(),
                    strict=True,
                )
            )
            assert held == want
    assert any(
        count > 1
        for s in segments.values()
        for p in s.postings.values()
        for count in p.counts[: p.n].tolist()
    )


@pytest.mark.anyio
async def test_opening_reads_the_arrays_so_the_first_search_finds_them(tmp_path: Path) -> None:
    """Opening the stores waits for the table to be read into arrays: a fresh process's first
    search ranks over them, as its later ones do."""
    stores = open_stores(tmp_path / "opened.db")
    await stores.episodic.put(MemoryItem(item_id="x", agent_id="a1", user_id="u", content="fig"))
    arrays = stores.episodic.lexical  # type: ignore[attr-defined]
    assert arrays.changes == -1
    await stores.open()
    assert arrays.changes >= 0 and arrays.segments
    await stores.aclose()


@pytest.mark.anyio
async def test_statistics_held_at_a_count_rank_as_the_in_memory_store(tmp_path: Path) -> None:
    """Searches between single writes reuse the statistics read at the table's change count
    (no statement for them the second time) and still rank as the in-memory store does once
    a write moves the count; an erase or a forget empties them."""
    rng = random.Random(21)
    items = corpus(rng, 200)
    memory, stores = InMemoryMemoryStore(), open_stores(tmp_path / "known.db")
    await memory.put_many(items)
    await stores.episodic.put_many(items)
    arrays = await built(stores.episodic)
    queries = random_queries(rng, WORDS, (1, 5, 40), 6, NOW)
    for step, item in enumerate(corpus(rng, 12, prefix="late")):
        for tenant in TENANTS[step % 3 :: 3]:
            await assert_ranked_alike(memory, stores.episodic, tenant, queries)
            await assert_ranked_alike(memory, stores.episodic, tenant, queries)
        assert arrays.known() and arrays._known_at == arrays.changes
        await memory.put(item)
        await stores.episodic.put(item)
    await stores.episodic.search(TENANTS[0], queries[0])  # read at the count the last put left
    statements: list[str] = []
    database = stores.episodic.database  # type: ignore[attr-defined]

    def traced(connection: Any) -> None:
        connection.set_trace_callback(statements.append)

    await database.read(traced, store="test")  # one pooled connection at least is traced
    for _ in range(4):
        await stores.episodic.search(TENANTS[0], queries[0])
    assert statements and not any("owner_stats" in statement for statement in statements)
    arrays.clear()
    assert arrays.known() == {}
    await stores.aclose()
