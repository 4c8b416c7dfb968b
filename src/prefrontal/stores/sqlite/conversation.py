"""SQLite conversation store: turns in insertion order, one summary per user."""

from __future__ import annotations

import sqlite3
from typing import Any

from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.durable import SharesDatabase, dump, read_one, readable
from prefrontal.stores.sqlite.database import VISIBLE, Database, erase, to_us
from prefrontal.stores.sqlite.exchange import SqliteExchangeWriter
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.traces import SqliteTraceStore
from prefrontal.stores.tenancy import Tenant

_STORE = "conversation"

_APPEND = """
INSERT INTO conversation_turns (agent_id, item_id, user_id, scope, session_id, created_at, body)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (agent_id, item_id, user_id) DO UPDATE SET
    scope = excluded.scope, session_id = excluded.session_id,
    created_at = excluded.created_at, body = excluded.body
"""


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


class SqliteConversationStore(SharesDatabase[Database]):
    """Turns in ``conversation_turns``; a replaced turn keeps its place (``seq``)."""

    async def append(self, turn: ConversationTurn) -> None:
        await self.database.write(lambda c: append_in(c, turn), store=_STORE)

    def exchange_writer(self, episodic: object, traces: object) -> SqliteExchangeWriter | None:
        """A writer of whole exchanges in one transaction, when ``episodic`` and ``traces``
        are SQLite stores on this store's database (``None`` otherwise)."""
        if not isinstance(episodic, SqliteMemoryStore) or not isinstance(traces, SqliteTraceStore):
            return None
        if episodic.database is not self.database or traces.database is not self.database:
            return None
        return SqliteExchangeWriter(self.database, append_in, episodic, traces)

    async def recent(
        self, tenant: Tenant, *, limit: int, session_id: str | None = None
    ) -> list[ConversationTurn]:
        if limit <= 0:
            return []
        params: dict[str, Any] = {"agent": tenant.agent_id, "user": tenant.user_id}
        params |= {"session": session_id, "limit": limit}
        sql = (
            f"SELECT body FROM conversation_turns WHERE {VISIBLE}"
            " AND (:session IS NULL OR session_id = :session)"
            " ORDER BY created_at DESC, seq DESC LIMIT :limit"
        )

        def run(connection: sqlite3.Connection) -> list[ConversationTurn]:
            rows = connection.execute(sql, params).fetchall()
            bodies = (b for (b,) in reversed(rows))
            return readable(bodies, ConversationTurn.model_validate_json, store=_STORE)

        return await self.database.read(run, store=_STORE)

    async def get_summary(self, tenant: Tenant) -> ConversationSummary | None:
        def run(connection: sqlite3.Connection) -> ConversationSummary | None:
            row = connection.execute(
                "SELECT body FROM conversation_summaries WHERE agent_id = ? AND user_id = ?",
                (tenant.agent_id, tenant.user_id),
            ).fetchone()
            return (
                None
                if row is None
                else read_one(row[0], ConversationSummary.model_validate_json, store=_STORE)
            )

        return await self.database.read(run, store=_STORE)

    async def put_summary(self, summary: ConversationSummary) -> None:
        def run(connection: sqlite3.Connection) -> None:
            row = (summary.agent_id, summary.user_id, dump(summary, store=_STORE))
            connection.execute(
                "INSERT OR REPLACE INTO conversation_summaries (agent_id, user_id, body)"
                " VALUES (?, ?, ?)",
                row,
            )

        await self.database.write(run, store=_STORE)

    async def erase(self, tenant: Tenant) -> int:
        def run(connection: sqlite3.Connection) -> int:
            turns = erase(connection, "conversation_turns", tenant)
            return turns + erase(connection, "conversation_summaries", tenant)

        return await self.database.write(run, store=_STORE)
