"""SQLite conversation store: turns in insertion order, one summary per user."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.durable import SharesDatabase, dump, read_one, readable
from prefrontal.stores.exchange import Lookup, SummaryChange, stored_leaving
from prefrontal.stores.sqlite import decoded
from prefrontal.stores.sqlite.database import VISIBLE, Database, erase, from_us, id_list, to_us
from prefrontal.stores.sqlite.exchange import SqliteExchangeWriter
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.traces import SqliteTraceStore
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import WorkingMemoryStore

_STORE = "conversation"

_APPEND = """
INSERT INTO conversation_turns (agent_id, item_id, user_id, scope, session_id, created_at, body)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (agent_id, item_id, user_id) DO UPDATE SET
    scope = excluded.scope, session_id = excluded.session_id,
    created_at = excluded.created_at, body = excluded.body
"""


_RECENT = (
    f"SELECT item_id, created_at, body FROM conversation_turns WHERE {VISIBLE}"
    " AND (:session IS NULL OR session_id = :session)"
    " ORDER BY created_at DESC, seq DESC LIMIT :limit"
)
_SUMMARY = "SELECT body FROM conversation_summaries WHERE agent_id = ? AND user_id = ?"
_DELETE = (
    "DELETE FROM conversation_turns WHERE agent_id = ? AND user_id = ?"
    " AND item_id IN (SELECT value FROM json_each(?)) RETURNING body"
)
_DROP_SUMMARY = "DELETE FROM conversation_summaries WHERE agent_id = ? AND user_id = ?"
_PUT_SUMMARY = (
    "INSERT OR REPLACE INTO conversation_summaries (agent_id, user_id, body) VALUES (?, ?, ?)"
)


def append_in(connection: sqlite3.Connection, turn: ConversationTurn) -> None:
    """Add or replace ``turn`` inside the caller's transaction."""
    row = (
        turn.agent_id,
        turn.item_id,
        turn.user_id,
        turn.scope.value,
        turn.session_id,
        to_us(turn.created_at),
        dump(turn, store=_STORE),
    )
    connection.execute(_APPEND, row)


def summary_in(connection: sqlite3.Connection, tenant: Tenant) -> ConversationSummary | None:
    """The tenant's rolling summary, read inside the caller's transaction."""
    row = connection.execute(_SUMMARY, (tenant.agent_id, tenant.user_id)).fetchone()
    return None if row is None else read_one(row[0], decoded.conversation_summary, store=_STORE)


def put_summary_in(connection: sqlite3.Connection, summary: ConversationSummary) -> None:
    """Write ``summary`` inside the caller's transaction."""
    row = (summary.agent_id, summary.user_id, dump(summary, store=_STORE))
    connection.execute(_PUT_SUMMARY, row)


def recent_rows(
    connection: sqlite3.Connection, tenant: Tenant, limit: int, session_id: str | None = None
) -> list[tuple[str, int, str]]:
    """``(item_id, created_at, body)`` of the newest ``limit`` turns visible to ``tenant``,
    oldest first."""
    params: dict[str, Any] = {"agent": tenant.agent_id, "user": tenant.user_id}
    params |= {"session": session_id, "limit": limit}
    return list(reversed(connection.execute(_RECENT, params).fetchall()))


class SqliteConversationStore(SharesDatabase[Database]):
    """Turns in ``conversation_turns``; a replaced turn keeps its place (``seq``)."""

    async def append(self, turn: ConversationTurn) -> None:
        await self.database.write(lambda c: append_in(c, turn), store=_STORE)

    def exchange_writer(
        self, episodic: object, traces: object, working_memory: WorkingMemoryStore
    ) -> SqliteExchangeWriter | None:
        """A writer of whole exchanges in one transaction, when ``episodic`` and ``traces``
        are SQLite stores on this store's database (``None`` otherwise). The
        working-memory state is saved in the same transaction when its store is
        on the database too, after it otherwise."""
        if not isinstance(episodic, SqliteMemoryStore) or not isinstance(traces, SqliteTraceStore):
            return None
        if episodic.database is not self.database or traces.database is not self.database:
            return None
        return SqliteExchangeWriter(self, episodic, traces, working_memory)

    def append_in(self, connection: sqlite3.Connection, turn: ConversationTurn) -> None:
        """Add or replace ``turn`` inside the caller's transaction."""
        append_in(connection, turn)

    def leaving_in(
        self, connection: sqlite3.Connection, lookup: Lookup
    ) -> tuple[ConversationSummary | None, tuple[ConversationTurn, ...]]:
        """The summary and the messages leaving the window (see
        :func:`~prefrontal.stores.exchange.leaving`); only those stored are parsed."""
        summary = summary_in(connection, lookup.tenant)
        rows = recent_rows(connection, lookup.tenant, lookup.window + lookup.batch)
        return summary, stored_leaving(
            [(item_id, from_us(at), body) for item_id, at, body in rows], lookup, summary
        )

    def replace_summary_in(self, connection: sqlite3.Connection, change: SummaryChange) -> bool:
        """Write ``change.summary`` if the stored summary is the one it replaces."""
        row = connection.execute(
            "SELECT json_extract(body, '$.through') FROM conversation_summaries"
            " WHERE agent_id = ? AND user_id = ?",
            (change.summary.agent_id, change.summary.user_id),
        ).fetchone()
        if not change.through_matches(row is not None, None if row is None else row[0]):
            return False
        put_summary_in(connection, change.summary)
        return True

    async def recent(
        self, tenant: Tenant, *, limit: int, session_id: str | None = None
    ) -> list[ConversationTurn]:
        if limit <= 0:
            return []

        def run(connection: sqlite3.Connection) -> list[ConversationTurn]:
            bodies = (body for _, _, body in recent_rows(connection, tenant, limit, session_id))
            return readable(bodies, decoded.conversation_turn, store=_STORE)

        return await self.database.read(run, store=_STORE, one_statement=True, quick=True)

    async def get_summary(self, tenant: Tenant) -> ConversationSummary | None:
        return await self.database.read(
            lambda c: summary_in(c, tenant), store=_STORE, one_statement=True, quick=True
        )

    async def put_summary(self, summary: ConversationSummary) -> None:
        await self.database.write(lambda c: put_summary_in(c, summary), store=_STORE)

    async def delete(self, tenant: Tenant, item_ids: Sequence[str]) -> list[ConversationTurn]:
        params = (tenant.agent_id, tenant.user_id, id_list(list(item_ids)))

        def run(connection: sqlite3.Connection) -> list[str]:
            return [body for (body,) in connection.execute(_DELETE, params).fetchall()]

        bodies = await self.database.write(run, store=_STORE)
        return readable(bodies, ConversationTurn.model_validate_json, store=_STORE)

    async def drop_summary(self, tenant: Tenant) -> bool:
        params = (tenant.agent_id, tenant.user_id)
        return bool(
            await self.database.write(
                lambda c: c.execute(_DROP_SUMMARY, params).rowcount, store=_STORE
            )
        )

    async def erase(self, tenant: Tenant) -> int:
        def run(connection: sqlite3.Connection) -> int:
            turns = erase(connection, "conversation_turns", tenant)
            return turns + erase(connection, "conversation_summaries", tenant)

        return await self.database.write(run, store=_STORE)
