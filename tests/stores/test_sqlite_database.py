"""The SQLite database layer: file, WAL, migrations, error mapping, lifecycle."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from prefrontal.bundle.models import Section
from prefrontal.demo import seed
from prefrontal.errors import ConfigurationError, StoreError, TransientStoreError
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryItem, MemoryQuery, Tenant, sqlite
from prefrontal.stores.durable import Migration
from prefrontal.stores.sqlite import Database, SqliteMemoryStore
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.migrations import LATEST, migrate, schema_version
from tests.conftest import FIXED_NOW, demo_request, orchestrator
from tests.pace import allowance_ms, collector_paused, healthy_turn_ms
from tests.stores.sqlite_schema import to_schema_4

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")


def item(item_id: str, content: str) -> MemoryItem:
    return MemoryItem(
        item_id=item_id, agent_id="agent-1", user_id="alice", content=content, created_at=FIXED_NOW
    )


async def test_first_use_creates_the_file_in_wal_mode_at_the_latest_schema(
    tmp_path: Path,
) -> None:
    """The file and its directories appear on first use, in WAL mode, fully migrated."""
    path = tmp_path / "deep" / "dir" / "memory.db"
    database = Database(path)
    assert not path.exists()
    await SqliteMemoryStore(database).put(item("a", "hello"))
    await database.aclose()
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert schema_version(connection) == LATEST
    assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_what_one_process_stored_the_next_one_reads(tmp_path: Path) -> None:
    """Closing and reopening the file keeps every store's data."""
    first = sqlite.open_stores(tmp_path / "m.db")
    await first.episodic.put(item("a", "the red bicycle"))
    await first.aclose()
    second = sqlite.open_stores(tmp_path / "m.db")
    hits = await second.episodic.search(ALICE, MemoryQuery(text="bicycle", now=FIXED_NOW))
    await second.aclose()
    assert [hit.item.item_id for hit in hits] == ["a"]


def test_migrations_apply_in_order_once() -> None:
    """Forward migrations run once each, in order, and record the version."""
    connection = sqlite3.connect(":memory:", isolation_level=None)
    steps = (
        Migration(1, "t", ("CREATE TABLE t (x)",)),
        Migration(2, "u", ("CREATE TABLE u (y)",)),
    )
    assert migrate(connection, steps[:1]) == 1
    assert migrate(connection, steps) == 2
    assert migrate(connection, steps) == 2


def test_a_database_newer_than_the_code_is_refused() -> None:
    """A schema version above the latest known raises instead of guessing."""
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.execute(f"PRAGMA user_version = {LATEST + 1}")
    with pytest.raises(StoreError, match="newer"):
        migrate(connection)


async def test_a_held_write_lock_is_a_transient_error(tmp_path: Path) -> None:
    """A write lock held past the busy timeout makes writes raise TransientStoreError."""
    path = tmp_path / "busy.db"
    database = Database(path, busy_timeout_ms=50)
    store = SqliteMemoryStore(database)
    await store.put(item("a", "first"))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(TransientStoreError) as raised:
            await store.put(item("b", "second"))
        assert raised.value.store == "episodic"
        assert [i.item_id for i in await store.get(ALICE, ["a", "b"])] == ["a"]
    finally:
        other.execute("ROLLBACK")
        other.close()
    await store.put(item("b", "second"))
    await database.aclose()


async def test_closed_database_raises_store_error(tmp_path: Path) -> None:
    """After aclose, calls raise StoreError; closing twice is harmless."""
    database = Database(tmp_path / "c.db")
    store = SqliteMemoryStore(database)
    await store.put(item("a", "x"))
    await database.aclose()
    await database.aclose()
    with pytest.raises(StoreError, match="closed"):
        await store.get(ALICE, ["a"])


@pytest.mark.parametrize("path", ["", ":memory:", "file:x?mode=memory"])
def test_a_file_path_is_required(path: str) -> None:
    """An in-memory database is refused at construction."""
    with pytest.raises(ConfigurationError):
        Database(path)


def test_unknown_memory_table_is_refused(tmp_path: Path) -> None:
    """A memory store name other than episodic or semantic is refused at construction."""
    with pytest.raises(ConfigurationError):
        SqliteMemoryStore(Database(tmp_path / "x.db"), "procedural")


async def test_embedder_embeds_items_and_queries(tmp_path: Path) -> None:
    """With an embedder, items get vectors when written and queries fuse vector similarity."""
    stores = sqlite.open_stores(tmp_path / "e.db", embedder=HashingEmbedder(32))
    await stores.episodic.put(item("a", "booked the dentist appointment"))
    (stored,) = await stores.episodic.get(ALICE, ["a"])
    hits = await stores.episodic.search(ALICE, MemoryQuery(text="dentist", now=FIXED_NOW))
    await stores.aclose()
    assert stored.embedding is not None
    assert len(stored.embedding) == 32
    assert hits[0].signals.keys() == {"bm25", "vector"}


async def test_index_stays_consistent_through_replacements(tmp_path: Path) -> None:
    """Replacing, superseding and recalling items leaves FTS5 and the statistics consistent."""
    database = Database(tmp_path / "i.db")
    store = SqliteMemoryStore(database)
    for round_ in range(3):
        await store.put_many([item(f"i{n}", f"note {n} round {round_} apples") for n in range(50)])
    await store.record_recall(ALICE, ["i1", "i2"], item("x", "x").created_at)
    await database.aclose()
    connection = sqlite3.connect(tmp_path / "i.db")
    connection.execute("INSERT INTO episodic_fts (episodic_fts) VALUES ('integrity-check')")
    kept = connection.execute("SELECT agent_id, docs, tokens FROM episodic_agent_stats")
    assert (
        kept.fetchall()
        == connection.execute(
            "SELECT agent_id, count(*), sum(length) FROM episodic_items GROUP BY agent_id"
        ).fetchall()
    )
    appl = connection.execute("SELECT agent_id, df FROM episodic_terms WHERE term = 'appl'")
    assert appl.fetchall() == [(ALICE.agent_id, 50)]


FIRST_TERMS_LAYOUT = """
    CREATE TABLE episodic_terms (
        term TEXT PRIMARY KEY, df INTEGER NOT NULL, max_tf INTEGER NOT NULL,
        min_length INTEGER NOT NULL
    ) WITHOUT ROWID"""
"""The term table as the first version 1 databases have it (no per-frequency lengths)."""


async def test_a_version_1_database_in_the_first_layout_is_upgraded(tmp_path: Path) -> None:
    """Migration 2 rebuilds term statistics that predate their current layout, from the items."""
    path = tmp_path / "old.db"
    stores = sqlite.open_stores(path)
    await stores.episodic.put_many(
        [item(f"n{n}", f"note {n}: apples and pears, apples {'again ' * n}") for n in range(6)]
    )
    await stores.aclose()
    connection = sqlite3.connect(path, isolation_level=None)
    current = connection.execute("SELECT * FROM episodic_terms ORDER BY term").fetchall()
    to_schema_4(connection)
    for trigger in ("insert", "delete", "update"):
        connection.execute(f"DROP TRIGGER episodic_index_{trigger}")
    connection.execute("DROP TABLE episodic_terms")
    connection.execute(FIRST_TERMS_LAYOUT)
    connection.execute("UPDATE episodic_stats SET docs = 0, tokens = 0")
    connection.execute("PRAGMA user_version = 1")
    connection.close()

    reopened = sqlite.open_stores(path)
    hits = await reopened.episodic.search(ALICE, MemoryQuery(text="apples again", now=FIXED_NOW))
    await reopened.aclose()
    connection = sqlite3.connect(path)
    assert schema_version(connection) == LATEST
    assert connection.execute("SELECT * FROM episodic_terms ORDER BY term").fetchall() == current
    assert connection.execute("SELECT docs FROM episodic_agent_stats").fetchall() == [(6,)]
    connection.close()
    assert [hit.item.item_id for hit in hits][:1] == ["n5"]

    again = sqlite.open_stores(path)
    await again.episodic.put(item("late", "a late note"))
    late = await again.episodic.search(ALICE, MemoryQuery(text="late", now=FIXED_NOW))
    await again.aclose()
    assert [hit.item.item_id for hit in late] == ["late"]


async def test_a_wait_for_a_held_lock_ends_at_the_callers_deadline(tmp_path: Path) -> None:
    """A write waiting on another connection's lock is cancelled promptly by the caller's scope:
    within a lock slice and the machine's pace (:mod:`tests.pace`), not at the 5 s busy
    timeout."""
    path = tmp_path / "held.db"
    database = Database(path)
    store = SqliteMemoryStore(database)
    await store.put(item("a", "first"))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    before = await healthy_turn_ms()
    try:
        with collector_paused():
            started = anyio.current_time()
            with anyio.move_on_after(0.1) as scope:
                await store.put(item("b", "second"))
            waited_ms = (anyio.current_time() - started) * 1_000
    finally:
        other.execute("ROLLBACK")
        other.close()
    bound_ms = 100 + allowance_ms(100, before, await healthy_turn_ms())  # a 20 ms slice and more
    assert scope.cancelled_caught
    assert waited_ms < bound_ms, (waited_ms, bound_ms)
    await database.aclose()


async def test_a_turn_over_a_locked_file_keeps_its_deadline(tmp_path: Path) -> None:
    """Another connection holding the write lock: the turn returns within its deadline plus
    50 ms and the machine's pace (:mod:`tests.pace`), with context."""
    stores = sqlite.open_stores(tmp_path / "locked.db")
    await seed(stores)
    turns = orchestrator(stores, deadline_ms=1_000)
    await turns.start_turn(demo_request())
    other = sqlite3.connect(tmp_path / "locked.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    before = await healthy_turn_ms()
    try:
        with collector_paused():
            started = anyio.current_time()
            result = await turns.start_turn(demo_request(session_id="another"))
            elapsed_ms = (anyio.current_time() - started) * 1_000
    finally:
        other.execute("ROLLBACK")
        other.close()
    await stores.aclose()
    bound_ms = 1_000 + allowance_ms(50, before, await healthy_turn_ms())
    assert elapsed_ms < bound_ms, (elapsed_ms, bound_ms)
    assert result.bundle.section(Section.CONSCIOUSNESS)
    assert result.bundle.section(Section.EPISODIC)
