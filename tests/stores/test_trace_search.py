"""Trace search: the words of a turn's message and reply find it, on every backend.

Memory, a real SQLite file (FTS5) and a PostgreSQL schema (tsvector, GIN).
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from prefrontal import Stores
from prefrontal.stores import sqlite
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceQuery, search_words
from prefrontal.traces.models import TurnEnding, TurnStatus, TurnTrace
from tests.unit.traces.helpers import T0, small_trace

pytestmark = pytest.mark.anyio


def trace(
    turn_id: str, minute: int, said: str | None, reply: str | None = None, **changes: object
) -> TurnTrace:
    """A small trace of atlas and maya that said ``said`` and was answered ``reply``."""
    ending = None
    if reply is not None:
        ending = TurnEnding(ended_at=T0 + timedelta(minutes=minute, seconds=1), reply=reply)
    return small_trace(turn_id, minute, user_input=said, ending=ending, **changes)


TRACES = [
    trace("t1", 0, "Where is the harbour?", "The harbour is north of the café."),
    trace("t2", 1, "Book the ferry to Skye", "Booked: the ferry leaves at nine."),
    trace("t3", 2, "What did I say about ferries?", None, status=TurnStatus.DEGRADED),
    trace("t4", 3, "Cancel the ferry", "Cancelled.", session_id="s2"),
    trace("r1", 4, "Book the ferry for me too", "Booked.", user_id="ravi"),
    trace("o1", 5, "ferry timetable", "Here it is.", agent_id="orion"),
    trace("q1", 6, None, "A reply with zanzibar in it"),
]


async def ids(stores: Stores, **query: object) -> list[str]:
    """The ids of the traces ``TraceQuery(**query)`` lists, newest first."""
    return [t.turn_id for t in await stores.traces.list(TraceQuery.model_validate(query))]


async def filled(stores: Stores) -> Stores:
    """``stores`` holding ``TRACES``."""
    for t in TRACES:
        await stores.traces.put(t)
    return stores


async def test_a_word_finds_the_turns_that_said_it_and_no_other(stores: Stores) -> None:
    """A word of a message or a reply lists exactly the turns holding it, newest first."""
    await filled(stores)
    assert await ids(stores, text="ferry") == ["o1", "r1", "t4", "t2"]
    assert await ids(stores, text="harbour") == ["t1"]
    assert await ids(stores, text="zanzibar") == ["q1"]
    assert await ids(stores, text="nothing-here") == []


async def test_every_word_must_be_there_whatever_the_case(stores: Stores) -> None:
    """Several words match only a turn holding all of them; case does not matter."""
    await filled(stores)
    assert await ids(stores, text="BOOK Ferry") == ["r1", "t2"]
    assert await ids(stores, text="booked nine") == ["t2"]
    assert await ids(stores, text="ferry harbour") == []


async def test_search_combines_with_the_other_filters(stores: Stores) -> None:
    """The text narrows the listing together with agent, user, session, status and paging."""
    await filled(stores)
    mine = {"agent_id": "atlas", "user_id": "maya"}
    assert await ids(stores, text="ferry", **mine) == ["t4", "t2"]
    assert await ids(stores, text="ferry", session_id="s1", **mine) == ["t2"]
    assert await ids(stores, text="ferries", status=TurnStatus.DEGRADED) == ["t3"]
    assert await ids(stores, text="ferry", agent_id="atlas", limit=1) == ["r1"]
    after = (TRACES[4].started_at, "r1")
    assert await ids(stores, text="ferry", agent_id="atlas", older_than=after) == ["t4", "t2"]


async def test_query_syntax_is_only_words(stores: Stores) -> None:
    """Operators, quotes and stars are separators, never syntax; no word finds nothing."""
    await filled(stores)
    assert await ids(stores, text='ferry" OR "harbour') == []
    assert await ids(stores, text="harbour*") == ["t1"]
    assert await ids(stores, text="NEAR(harbour café)") == []
    assert await ids(stores, text="?!  --") == []
    assert search_words('a "b" c_d NEAR(é)') == ("a", "b", "c", "d", "near", "é")


async def test_a_changed_trace_is_found_by_its_new_words_only(stores: Stores) -> None:
    """Saving a trace again (its ending, a forgotten message) moves its words in the index."""
    await filled(stores)
    await stores.traces.put(TRACES[2].model_copy(update={"ending": TRACES[0].ending}))
    assert await ids(stores, text="café") == ["t3", "t1"]
    await stores.traces.put(TRACES[0].model_copy(update={"user_input": None, "ending": None}))
    assert await ids(stores, text="harbour") == ["t3"]


async def test_erase_and_prune_take_the_words_with_the_trace(stores: Stores) -> None:
    """An erased user's and a pruned trace's words find nothing any more."""
    await filled(stores)
    assert await stores.traces.erase(Tenant(agent_id="atlas", user_id="ravi")) == 1
    assert await ids(stores, text="ferry") == ["o1", "t4", "t2"]
    assert await stores.traces.prune(before=TRACES[2].started_at) == 2
    assert await ids(stores, text="ferry") == ["o1", "t4"]
    assert await ids(stores, text="harbour") == []


async def test_sqlite_folds_accents(tmp_path: Path) -> None:
    """On SQLite the index folds accents: "cafe" finds "café"."""
    stores = await filled(sqlite.open_stores(tmp_path / "s.db"))
    try:
        assert await ids(stores, text="cafe") == ["t1"]
    finally:
        await stores.aclose()


async def test_an_older_sqlite_file_has_its_traces_indexed(tmp_path: Path) -> None:
    """Traces written before the index existed are found once the file is upgraded."""
    path = tmp_path / "old.db"
    stores = await filled(sqlite.open_stores(path))
    await stores.aclose()
    with sqlite3.connect(path) as connection:
        for kind in ("insert", "delete", "update"):
            connection.execute(f"DROP TRIGGER IF EXISTS traces_words_{kind}")
        connection.execute("DROP TABLE traces_fts")
        connection.execute("PRAGMA user_version = 13")  # before schema 14, the trace search
    connection.close()
    stores = sqlite.open_stores(path)
    try:
        assert await ids(stores, text="harbour") == ["t1"]
    finally:
        await stores.aclose()


async def test_a_sqlite_file_of_schema_18_indexes_words_as_it_writes(tmp_path: Path) -> None:
    """Migration 19 drops the triggers that indexed a trace's words from its body: the traces
    a file of schema 18 indexed are found, a put moves a trace's words (the words it replaces
    no longer find it), a new trace's words find it, and a pruned trace's words are gone."""
    path = tmp_path / "old.db"
    stores = await filled(sqlite.open_stores(path))
    await stores.aclose()
    with sqlite3.connect(path) as connection:
        words = "coalesce(json_extract(new.body, '$.user_input'), '') || ' ' || coalesce("
        words += "json_extract(new.body, '$.ending.reply'), '')"
        connection.execute(f"""CREATE TRIGGER traces_words_insert AFTER INSERT ON traces BEGIN
            INSERT INTO traces_fts (rowid, words) VALUES (new.rowid, {words}); END""")
        connection.execute(f"""CREATE TRIGGER traces_words_update AFTER UPDATE ON traces BEGIN
            DELETE FROM traces_fts WHERE rowid = old.rowid;
            INSERT INTO traces_fts (rowid, words) VALUES (new.rowid, {words}); END""")
        connection.execute("PRAGMA user_version = 18")
    connection.close()
    stores = sqlite.open_stores(path)
    try:
        assert await ids(stores, text="harbour") == ["t1"]
        await stores.traces.put(trace("t1", 0, "Where is the lighthouse?", "On the cape."))
        await stores.traces.put(trace("n1", 7, "A harbour pilot", None))
        assert await ids(stores, text="harbour") == ["n1"]
        assert await ids(stores, text="lighthouse cape") == ["t1"]
        assert await stores.traces.prune(before=T0 + timedelta(minutes=1)) == 1
        assert await ids(stores, text="lighthouse") == []
        database = stores.traces.database  # type: ignore[attr-defined]
        sql = "SELECT count(*) FROM traces_fts WHERE traces_fts MATCH 'lighthouse'"
        assert await database.read(lambda c: c.execute(sql).fetchone()[0], store="t") == 0
        triggers = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'traces_w%'"
        names = await database.read(lambda c: c.execute(triggers).fetchall(), store="t")
        assert [name for (name,) in names] == ["traces_words_delete"]
    finally:
        await stores.aclose()


async def test_a_sqlite_trace_put_again_indexes_the_words_of_its_last_version(
    tmp_path: Path,
) -> None:
    """An open trace put, then ended: its message and reply find it, once (one index row)."""
    stores = sqlite.open_stores(tmp_path / "s.db")
    try:
        await stores.traces.put(trace("t1", 0, "Where is the harbour?", None))
        assert await ids(stores, text="harbour") == ["t1"]
        await stores.traces.put(TRACES[0])
        assert await ids(stores, text="harbour north cafe") == ["t1"]
        database = stores.traces.database  # type: ignore[attr-defined]
        rows = "SELECT count(*) FROM traces_fts"
        assert await database.read(lambda c: c.execute(rows).fetchone()[0], store="t") == 1
    finally:
        await stores.aclose()
