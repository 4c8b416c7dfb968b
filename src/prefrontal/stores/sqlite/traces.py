"""SQLite trace store: every sealed turn trace, as JSON with its filter columns.

A trace's JSON is what ``trace.model_dump_json()`` gives, written by
:func:`~prefrontal.traces.documents.serialize`: a turn's ended trace (a copy
of its open trace with its ending set) is its open trace's JSON, kept since
that was written, and its ending's, the context as sent not serialized again
(about a tenth of a millisecond a turn in a long conversation, as the
in-memory store does).

The JSON is written and read as its UTF-8 bytes (bound as a blob and cast to text, read
cast to a blob), as :mod:`.working_memory` does its states: the column holds text, and a
trace, which quotes the user's words and the context as sent, is never decoded into a
Python string, hashed at two or four bytes a character by the parsed documents' cache
(:mod:`prefrontal.traces.documents`) and encoded back at each write (as text, a single
character beyond Latin-1 in tens of kilobytes makes every character two bytes).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from pydantic_core import PydanticSerializationError

from prefrontal.errors import ItemRejectedError
from prefrontal.stores.durable import SharesDatabase, encodable, read_one, readable
from prefrontal.stores.sqlite.database import Database, erase, to_us
from prefrontal.stores.sqlite.open_traces import OPEN_SQL
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import OPEN_SUFFIX, TraceQuery, search_words, searched_text
from prefrontal.traces.documents import parse, remember, serialize
from prefrontal.traces.models import TurnTrace

_STORE = "traces"


class SqliteTraceStore(SharesDatabase[Database]):
    """Traces in ``traces``, keyed by turn id."""

    async def put(self, trace: TurnTrace) -> None:
        await self.database.write(lambda c: self.put_in(c, trace), store=_STORE)

    def put_in(self, connection: sqlite3.Connection, trace: TurnTrace) -> None:
        """Save ``trace`` inside the caller's transaction."""
        row = (
            trace.turn_id,
            trace.parent_turn_id,
            trace.agent_id,
            trace.user_id,
            trace.session_id,
            trace.status.value,
            to_us(trace.started_at),
            body := _document(trace),
        )
        remember(body, trace)  # the turn's end reads it back without parsing
        ((rowid,),) = connection.execute(_PUT, row).fetchall()
        connection.execute(_UNINDEX, (rowid,))
        connection.execute(_INDEX, (rowid, searched_text(trace)))

    def ended_in(self, connection: sqlite3.Connection, tenant: Tenant, turn_id: str) -> bool:
        """True when the tenant's trace of ``turn_id`` has an ending (inside a transaction).

        An open trace (most checks: a turn's end checks its own trace) is known from the
        index :data:`~prefrontal.stores.sqlite.open_traces.OPEN_INDEX` alone, its body not
        read; any other body is checked.
        """
        key = (turn_id, tenant.agent_id, tenant.user_id)
        row = connection.execute(OPEN_SQL, key).fetchone()
        if row is None or row[0]:
            return False
        row = connection.execute(_ENDED, (OPEN_SUFFIX, *key)).fetchone()
        return row is not None and bool(row[0])

    def get_in(
        self, connection: sqlite3.Connection, tenant: Tenant, turn_id: str
    ) -> TurnTrace | None:
        """The tenant's trace of ``turn_id``, read inside the caller's transaction."""
        if not encodable(turn_id):
            return None
        row = connection.execute(
            f"SELECT {_BODY} FROM traces WHERE turn_id = ? AND agent_id = ? AND user_id = ?",
            (turn_id, tenant.agent_id, tenant.user_id),
        ).fetchone()
        return None if row is None else read_one(row[0], parse, store=_STORE)

    async def get(self, tenant: Tenant, turn_id: str) -> TurnTrace | None:
        return await self.database.read(
            lambda c: self.get_in(c, tenant, turn_id), store=_STORE, one_statement=True, quick=True
        )

    async def list(self, query: TraceQuery) -> list[TurnTrace]:
        def run(connection: sqlite3.Connection) -> list[TurnTrace]:
            few = False
            if query.text is not None and search_words(query.text):
                matched = connection.execute(_MATCHES, {"text": _match(query.text)}).fetchone()
                few = matched[0] <= FEW_MATCHES
            sql, params = _select(query, few=few)
            rows = connection.execute(sql, params).fetchall()
            return readable((b for (b,) in rows), parse, store=_STORE)

        return await self.database.read(run, store=_STORE)

    async def scrub(self) -> None:
        """Rewrite the search index and truncate the log once erased rows are gone (zeroed)."""
        await self.database.scrub(("traces_fts",), store=_STORE)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.write(
            lambda connection: erase(connection, "traces", tenant), store=_STORE
        )

    async def prune(self, *, before: datetime | None = None, keep: int | None = None) -> int:
        def run(connection: sqlite3.Connection) -> int:
            removed = 0
            if before is not None:
                cursor = connection.execute(
                    "DELETE FROM traces WHERE started_at < ?", (to_us(before),)
                )
                removed += cursor.rowcount
            if keep is not None:
                cursor = connection.execute(_BEYOND_NEWEST, (keep,))
                removed += cursor.rowcount
            return removed

        return await self.database.write(run, store=_STORE)


def _document(trace: TurnTrace) -> bytes:
    """The UTF-8 of the JSON ``trace.model_dump_json()`` gives, by :func:`serialize` (the
    module's text); text that is not valid UTF-8 is an :class:`ItemRejectedError`, as every
    store's."""
    try:
        return serialize(trace)
    except PydanticSerializationError as error:
        raise ItemRejectedError(f"cannot store TurnTrace: {error}", store=_STORE) from error


_PUT = """
INSERT INTO traces (turn_id, parent_turn_id, agent_id, user_id, session_id, status, started_at,
    body)
VALUES (?, ?, ?, ?, ?, ?, ?, CAST(? AS TEXT))
ON CONFLICT (turn_id) DO UPDATE SET
    parent_turn_id = excluded.parent_turn_id, agent_id = excluded.agent_id,
    user_id = excluded.user_id, session_id = excluded.session_id, status = excluded.status,
    started_at = excluded.started_at, body = excluded.body
RETURNING rowid
"""
"""An upsert, not ``INSERT OR REPLACE``: the row keeps its row id, the key of its words in the
full-text index (a replace would not fire the delete trigger). The body is bound as its UTF-8
bytes and stored as text (the module's text)."""

_BODY = "CAST(body AS BLOB)"
"""A trace's JSON as its UTF-8 bytes, as it is parsed (the module's text)."""

_UNINDEX = "DELETE FROM traces_fts WHERE rowid = ?"
_INDEX = "INSERT INTO traces_fts (rowid, words) VALUES (?, ?)"
"""A trace's words (:func:`~prefrontal.stores.traces.searched_text`) indexed under its row id
after its put, the words of the version it replaced taken out first: what the triggers of
schema 14 did from the body's JSON, which they parsed whole (tens of kilobytes a trace of a
long conversation) at every write. A deleted trace's words go by trigger."""

FEW_MATCHES = 500
"""Up to this many traces holding a search's words, they are read by row id and sorted;
more, and the listing's index is walked newest first until a page of them is found."""

_MATCHES = "SELECT count(*) FROM traces_fts WHERE traces_fts MATCH :text"


def _match(text: str) -> str:
    """The FTS5 query of ``text``: each word quoted (a phrase of one), all of them required."""
    return " ".join('"' + word.replace('"', '""') + '"' for word in search_words(text))


_ENDED = f"""
SELECT CASE WHEN substr(CAST(body AS BLOB), -{len(OPEN_SUFFIX)}) = CAST(?1 AS BLOB) THEN 0
    ELSE json_extract(body, '$.ending') IS NOT NULL END
FROM traces WHERE turn_id = ?2 AND agent_id = ?3 AND user_id = ?4
"""
"""A row when the trace has an ending; a body ending as an open trace's is not parsed.

The suffix is compared as bytes: the suffix of a text counts its characters from the start
(a quarter of the cost of reading a long trace), the suffix of a blob does not, and the
suffix is ASCII, so its last bytes are its last characters."""
assert OPEN_SUFFIX.isascii()

_BEYOND_NEWEST = """
DELETE FROM traces WHERE turn_id NOT IN (
    SELECT turn_id FROM traces ORDER BY started_at DESC, turn_id DESC LIMIT ?
)
"""


def _select(query: TraceQuery, *, few: bool = False) -> tuple[str, dict[str, Any]]:
    """The SQL of ``query``; ``few``: its words are in few traces (see :data:`FEW_MATCHES`).

    With few matches the page is chosen among them (read by row id) and only
    its bodies are read; with many, ``+rowid`` keeps the row id from being
    used to look rows up, so the planner walks the listing's index in order
    and stops after a page.
    """
    filters = {
        "turn_id = :turn_id": query.turn_id,
        "parent_turn_id = :parent_turn_id": query.parent_turn_id,
        "agent_id = :agent_id": query.agent_id,
        "user_id = :user_id": query.user_id,
        "session_id = :session_id": query.session_id,
        "status = :status": None if query.status is None else query.status.value,
        "started_at >= :since": None if query.since is None else to_us(query.since),
        "started_at < :until": None if query.until is None else to_us(query.until),
    }
    where = [clause for clause, value in filters.items() if value is not None]
    params: dict[str, Any] = {
        clause.rsplit(":", 1)[1]: value for clause, value in filters.items() if value is not None
    }
    if query.older_than is not None:
        where.append("(started_at < :older_at OR (started_at = :older_at AND turn_id < :older_id))")
        params["older_at"] = to_us(query.older_than[0])
        params["older_id"] = query.older_than[1]
    if query.newer_than is not None:
        where.append("(started_at > :newer_at OR (started_at = :newer_at AND turn_id > :newer_id))")
        params["newer_at"] = to_us(query.newer_than[0])
        params["newer_id"] = query.newer_than[1]
    if query.user_ids is not None:
        where.append("user_id IN (SELECT value FROM json_each(:user_ids))")
        params["user_ids"] = json.dumps(list(query.user_ids))
    if query.text is not None:
        words = search_words(query.text)
        if not words:
            where.append("0")
        else:
            where.append("+rowid IN (SELECT rowid FROM traces_fts WHERE traces_fts MATCH :text)")
            params["text"] = _match(query.text)
    order = "ASC" if query.oldest_first else "DESC"
    params["limit"] = query.limit
    ordered = f"ORDER BY started_at {order}, turn_id {order}"
    if few and "text" in params:
        where[-1] = "f.traces_fts MATCH :text"
        page = (
            "SELECT traces.rowid FROM traces_fts AS f CROSS JOIN traces ON traces.rowid = f.rowid"
            f" WHERE {' AND '.join(where)} {ordered} LIMIT :limit"
        )
        return f"SELECT {_BODY} FROM traces WHERE rowid IN ({page}) {ordered}", params
    where_sql = " AND ".join(where) or "1"
    sql = f"SELECT {_BODY} FROM traces WHERE {where_sql} {ordered} LIMIT :limit"
    return sql, params
