"""The SQLite trace store writes a trace's JSON as ``model_dump_json`` gives it, the ended copy
of an open trace from that trace's JSON (its context as sent not serialized again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prefrontal.errors import ItemRejectedError
from prefrontal.stores import Tenant, sqlite
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.traces import SqliteTraceStore
from prefrontal.stores.traces import TraceQuery
from prefrontal.traces import documents
from prefrontal.traces.models import TurnEnding, TurnTrace
from tests.conftest import FIXED_NOW
from tests.unit.traces.helpers import small_trace

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="atlas", user_id="maya")


def _body(store: SqliteTraceStore, turn_id: str) -> str:
    def read(connection: sqlite3.Connection) -> str:
        row = connection.execute("SELECT body FROM traces WHERE turn_id = ?", (turn_id,))
        return str(row.fetchone()[0])

    return store.database.read_here(read, store="traces")


async def test_open_ended_and_stamped_traces_are_stored_as_model_dump_json_gives_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each body is the trace's ``model_dump_json()``, byte for byte, and reads back equal;
    the ended copies are written from the open trace's JSON, not serialized whole."""
    stores = sqlite.open_stores(tmp_path / "t.db")
    store = stores.traces
    assert isinstance(store, SqliteTraceStore)
    opened = small_trace("t1", 4, user_input="When is the review?")
    ending = TurnEnding(reply="On Friday.", ended_at=FIXED_NOW)
    ended = opened.model_copy(update={"ending": ending})
    stamped = ended.model_copy(
        update={"ending": ending.model_copy(update={"warnings": ("summary: late",)})}
    )
    try:
        await store.put(opened)
        whole: list[TurnTrace] = []
        serializer, dump_json = documents._SERIALIZER, TurnTrace.model_dump_json

        class Counted:
            """The trace serializer, counting the traces it serializes whole."""

            def to_json(self, trace: TurnTrace) -> bytes:
                whole.append(trace)
                return serializer.to_json(trace)

        def counted_dump(trace: TurnTrace, **options: Any) -> str:
            whole.append(trace)
            return dump_json(trace, **options)

        for trace in (opened, ended, stamped):
            with monkeypatch.context() as patched:
                patched.setattr(documents, "_SERIALIZER", Counted())
                patched.setattr(TurnTrace, "model_dump_json", counted_dump)
                await store.put(trace)
            assert _body(store, "t1") == trace.model_dump_json()
            assert await store.get(TENANT, "t1") == trace
    finally:
        await stores.aclose()
    assert whole == []


async def test_a_trace_that_cannot_be_encoded_is_rejected_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    """A lone surrogate in the ending of an open trace's copy is refused as before."""
    stores = sqlite.open_stores(tmp_path / "bad.db")
    store = stores.traces
    opened = small_trace("t2", 2, user_input="A question")
    bad = opened.model_copy(
        update={"ending": TurnEnding(reply="\ud800 broken", ended_at=FIXED_NOW)}
    )
    try:
        await store.put(opened)
        with pytest.raises(ItemRejectedError):
            await store.put(bad)
        assert await store.get(TENANT, "t2") == opened
    finally:
        await stores.aclose()


async def test_a_trace_is_stored_as_text_and_read_and_searched_as_the_words_it_holds(
    tmp_path: Path,
) -> None:
    """A trace beyond Latin-1 (bound as UTF-8 bytes) is stored as text, equal to its JSON,
    found by its words, and read back equal after the parsed documents are forgotten."""
    stores = sqlite.open_stores(tmp_path / "text.db")
    store = stores.traces
    assert isinstance(store, SqliteTraceStore)
    opened = small_trace("t3", 3, user_input="Lena’s review — Zürich 東京 🙂")
    ended = opened.model_copy(
        update={"ending": TurnEnding(reply="Friday — 金曜日 ✓", ended_at=FIXED_NOW)}
    )

    def kind(connection: sqlite3.Connection) -> str:
        row = connection.execute("SELECT typeof(body) FROM traces WHERE turn_id = 't3'")
        return str(row.fetchone()[0])

    try:
        for trace in (opened, ended):
            await store.put(trace)
            assert store.database.read_here(kind, store="traces") == "text"
            assert _body(store, "t3") == trace.model_dump_json()
            documents._PARSED.clear()
            assert await store.get(TENANT, "t3") == trace
        found = await store.list(TraceQuery(text="Zürich Friday", user_id="maya"))
        assert found == [ended]
    finally:
        await stores.aclose()
