"""PostgreSQL conversation store: turns in insertion order, one summary per user."""

from __future__ import annotations

from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.durable import SharesDatabase, dump, read_one, readable
from prefrontal.stores.postgres.database import (
    VISIBLE,
    Connection,
    PostgresDatabase,
    erase_statement,
)
from prefrontal.stores.postgres.exchange import PostgresExchangeWriter
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.traces import PostgresTraceStore
from prefrontal.stores.tenancy import Tenant

_STORE = "conversation"

_APPEND = """
INSERT INTO conversation_turns (agent_id, item_id, user_id, scope, session_id, created_at, body)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (agent_id, item_id, user_id) DO UPDATE SET
    scope = excluded.scope, session_id = excluded.session_id,
    created_at = excluded.created_at, body = excluded.body
"""

_RECENT = f"""
SELECT body FROM conversation_turns
WHERE {VISIBLE} AND ($3::text IS NULL OR session_id = $3)
ORDER BY created_at DESC, seq DESC LIMIT $4
"""


def _row(turn: ConversationTurn) -> tuple[object, ...]:
    return (
        turn.agent_id,
        turn.item_id,
        turn.user_id,
        turn.scope.value,
        turn.session_id,
        turn.created_at,
        dump(turn, store=_STORE),
    )


async def append_in(connection: Connection, turn: ConversationTurn) -> None:
    """Add or replace ``turn`` inside the caller's transaction."""
    await connection.execute(_APPEND, *_row(turn))


class PostgresConversationStore(SharesDatabase[PostgresDatabase]):
    """Turns in ``conversation_turns``; a replaced turn keeps its place (``seq``)."""

    async def append(self, turn: ConversationTurn) -> None:
        await self.database.execute(_APPEND, *_row(turn), store=_STORE)

    def exchange_writer(self, episodic: object, traces: object) -> PostgresExchangeWriter | None:
        """A writer of whole exchanges in one transaction, when ``episodic`` and ``traces``
        are PostgreSQL stores on this store's database (``None`` otherwise)."""
        if not isinstance(episodic, PostgresMemoryStore):
            return None
        if not isinstance(traces, PostgresTraceStore):
            return None
        if episodic.database is not self.database or traces.database is not self.database:
            return None
        return PostgresExchangeWriter(self.database, append_in, episodic, traces)

    async def recent(
        self, tenant: Tenant, *, limit: int, session_id: str | None = None
    ) -> list[ConversationTurn]:
        if limit <= 0:
            return []

        async def run(connection: Connection) -> list[ConversationTurn]:
            rows = await connection.fetch(
                _RECENT, tenant.agent_id, tenant.user_id, session_id, limit
            )
            bodies = (r[0] for r in reversed(rows))
            return readable(bodies, ConversationTurn.model_validate_json, store=_STORE)

        return await self.database.read(run, store=_STORE)

    async def get_summary(self, tenant: Tenant) -> ConversationSummary | None:
        async def run(connection: Connection) -> ConversationSummary | None:
            body = await connection.fetchval(
                "SELECT body FROM conversation_summaries WHERE agent_id = $1 AND user_id = $2",
                tenant.agent_id,
                tenant.user_id,
            )
            return (
                None
                if body is None
                else read_one(body, ConversationSummary.model_validate_json, store=_STORE)
            )

        return await self.database.read(run, store=_STORE)

    async def put_summary(self, summary: ConversationSummary) -> None:
        body = dump(summary, store=_STORE)

        await self.database.execute(
            "INSERT INTO conversation_summaries (agent_id, user_id, body) VALUES ($1, $2, $3)"
            " ON CONFLICT (agent_id, user_id) DO UPDATE SET body = excluded.body",
            summary.agent_id,
            summary.user_id,
            body,
            store=_STORE,
        )

    async def erase(self, tenant: Tenant) -> int:
        async def run(connection: Connection) -> int:
            removed = 0
            for table in ("conversation_turns", "conversation_summaries"):
                status = await connection.execute(
                    erase_statement(table), tenant.agent_id, tenant.user_id
                )
                removed += int(status.rsplit(" ", 1)[-1])
            return removed

        return await self.database.write(run, store=_STORE)
