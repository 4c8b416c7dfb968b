"""PostgreSQL conversation store: turns in insertion order, one summary per user."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.durable import SharesDatabase, dump, read_one, readable
from prefrontal.stores.exchange import SummaryChange
from prefrontal.stores.postgres.database import (
    VISIBLE,
    Connection,
    PostgresDatabase,
    erase_statement,
    storable_ids,
)
from prefrontal.stores.postgres.exchange import PostgresExchangeWriter
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.traces import PostgresTraceStore
from prefrontal.stores.postgres.turn_reads import StateRead
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import WorkingMemoryStore

_STORE = "conversation"

_APPEND = """
INSERT INTO conversation_turns (agent_id, item_id, user_id, scope, session_id, created_at, body)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (agent_id, item_id, user_id) DO UPDATE SET
    scope = excluded.scope, session_id = excluded.session_id,
    created_at = excluded.created_at, body = excluded.body
"""

_RECENT = StateRead(
    "item_id, created_at, body",
    f"""FROM conversation_turns
WHERE {VISIBLE} AND ($3::text IS NULL OR session_id = $3)
ORDER BY created_at DESC, seq DESC LIMIT $4
""",
)


_SUMMARY = StateRead("body", "FROM conversation_summaries WHERE agent_id = $1 AND user_id = $2")
_DELETE = (
    "DELETE FROM conversation_turns WHERE agent_id = $1 AND user_id = $2"
    " AND item_id = ANY($3::text[]) RETURNING body"
)
_DROP_SUMMARY = "DELETE FROM conversation_summaries WHERE agent_id = $1 AND user_id = $2"
_REPLACE_SUMMARY = """
WITH stored AS MATERIALIZED (
    SELECT (body::jsonb)->>'through' AS through FROM conversation_summaries
    WHERE agent_id = $1 AND user_id = $2 FOR UPDATE)
INSERT INTO conversation_summaries (agent_id, user_id, body)
SELECT $1, $2, $3
WHERE CASE WHEN $4::boolean
    THEN EXISTS (SELECT 1 FROM stored WHERE stored.through IS NOT DISTINCT FROM $5::text)
    ELSE NOT EXISTS (SELECT 1 FROM stored) END
ON CONFLICT (agent_id, user_id) DO UPDATE SET body = excluded.body
RETURNING 1"""
"""Write summary ``$3`` if the stored one is what it replaces, one statement: the stored row
locked first (``FOR UPDATE``, read again at its newest when another holds it), then none when
``$4`` is false, else one whose ``through`` is ``$5``
(:meth:`~prefrontal.stores.exchange.SummaryChange.through_matches`, in SQL)."""
_PUT_SUMMARY = (
    "INSERT INTO conversation_summaries (agent_id, user_id, body) VALUES ($1, $2, $3)"
    " ON CONFLICT (agent_id, user_id) DO UPDATE SET body = excluded.body"
)


async def summary_in(connection: Connection, tenant: Tenant) -> ConversationSummary | None:
    """The tenant's rolling summary, read inside the caller's transaction."""
    body = await connection.fetchval(_SUMMARY.statement, tenant.agent_id, tenant.user_id)
    return (
        None
        if body is None
        else read_one(body, ConversationSummary.model_validate_json, store=_STORE)
    )


async def recent_rows(
    connection: Connection, tenant: Tenant, limit: int, session_id: str | None = None
) -> list[tuple[str, datetime, str]]:
    """``(item_id, created_at, body)`` of the newest ``limit`` turns visible to ``tenant``,
    oldest first."""
    rows = await connection.fetch(
        _RECENT.statement, tenant.agent_id, tenant.user_id, session_id, limit
    )
    return [(r[0], r[1], r[2]) for r in reversed(rows)]


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


def _appended(count: int) -> str:
    """:data:`_APPEND` for ``count`` turns in one statement, their rows in order (``$1..$7``
    the first's, ``$8..$14`` the second's...)."""
    values = ", ".join(
        "(" + ", ".join(f"${7 * n + k}" for k in range(1, 8)) + ")" for n in range(count)
    )
    return _APPEND.replace("VALUES ($1, $2, $3, $4, $5, $6, $7)", f"VALUES {values}")


async def append_in(connection: Connection, turn: ConversationTurn) -> None:
    """Add or replace ``turn`` inside the caller's transaction."""
    await connection.execute(_APPEND, *_row(turn))


class PostgresConversationStore(SharesDatabase[PostgresDatabase]):
    """Turns in ``conversation_turns``; a replaced turn keeps its place (``seq``)."""

    async def append(self, turn: ConversationTurn) -> None:
        await self.database.execute(_APPEND, *_row(turn), store=_STORE)

    def exchange_writer(
        self, episodic: object, traces: object, working_memory: WorkingMemoryStore
    ) -> PostgresExchangeWriter | None:
        """A writer of whole exchanges in one transaction, when ``episodic`` and ``traces``
        are PostgreSQL stores on this store's database (``None`` otherwise). The
        working-memory state is saved in the same transaction when its store is
        on the database too, after it otherwise."""
        if not isinstance(episodic, PostgresMemoryStore):
            return None
        if not isinstance(traces, PostgresTraceStore):
            return None
        if episodic.database is not self.database or traces.database is not self.database:
            return None
        return PostgresExchangeWriter(self, episodic, traces, working_memory)

    async def append_in(self, connection: Connection, turn: ConversationTurn) -> None:
        """Add or replace ``turn`` inside the caller's transaction."""
        await append_in(connection, turn)

    async def append_all_in(
        self, connection: Connection, turns: Sequence[ConversationTurn]
    ) -> None:
        """Add or replace ``turns``, in order, inside the caller's transaction: one pipelined
        round trip (``executemany``) for all of them."""
        if turns:
            await connection.executemany(_APPEND, [_row(turn) for turn in turns])

    def append_all_write(
        self, turns: Sequence[ConversationTurn]
    ) -> tuple[str, tuple[object, ...]] | None:
        """What :meth:`append_all_in` writes, as one statement and its parameters (to be sent
        with other writes, :mod:`.exchange`): one ``INSERT`` of every turn, in order (each
        turn's place, ``seq``, taken in that order). ``None`` when there are none, or when
        two turns have one key (one statement cannot write a row twice)."""
        keys = {(turn.agent_id, turn.item_id, turn.user_id) for turn in turns}
        if not turns or len(keys) < len(turns):
            return None
        args: list[object] = []
        for turn in turns:
            args += _row(turn)
        return _appended(len(turns)), tuple(args)

    def replace_summary_write(self, change: SummaryChange) -> tuple[str, tuple[object, ...]]:
        """What :meth:`replace_summary_in` sends for ``change``: its statement (returning a
        row when the summary was written) and parameters."""
        summary, replaces = change.summary, change.replaces
        return _REPLACE_SUMMARY, (
            summary.agent_id,
            summary.user_id,
            dump(summary, store=_STORE),
            replaces is not None,
            None if replaces is None else replaces.through,
        )

    async def replace_summary_in(self, connection: Connection, change: SummaryChange) -> bool:
        """Write ``change.summary`` if the stored summary is the one it replaces (in a transaction).

        The stored row is locked until the commit, so two replacements never both succeed.
        """
        summary, replaces = change.summary, change.replaces
        written = await connection.fetchval(
            _REPLACE_SUMMARY,
            summary.agent_id,
            summary.user_id,
            dump(summary, store=_STORE),
            replaces is not None,
            None if replaces is None else replaces.through,
        )
        return written is not None

    async def recent(
        self, tenant: Tenant, *, limit: int, session_id: str | None = None
    ) -> list[ConversationTurn]:
        if limit <= 0:
            return []

        args = (tenant.agent_id, tenant.user_id, session_id, limit)
        rows = await self.database.state_rows(_RECENT, *args, store=_STORE)
        bodies = (row[2] for row in reversed(rows))
        return readable(bodies, ConversationTurn.model_validate_json, store=_STORE)

    async def get_summary(self, tenant: Tenant) -> ConversationSummary | None:
        rows = await self.database.state_rows(
            _SUMMARY, tenant.agent_id, tenant.user_id, store=_STORE
        )
        if not rows:
            return None
        return read_one(rows[0][0], ConversationSummary.model_validate_json, store=_STORE)

    async def put_summary(self, summary: ConversationSummary) -> None:
        body = dump(summary, store=_STORE)
        await self.database.execute(
            _PUT_SUMMARY, summary.agent_id, summary.user_id, body, store=_STORE
        )

    async def delete(self, tenant: Tenant, item_ids: Sequence[str]) -> list[ConversationTurn]:
        ids = storable_ids(list(item_ids))

        async def run(connection: Connection) -> list[str]:
            rows = await connection.fetch(_DELETE, tenant.agent_id, tenant.user_id, ids)
            return [row[0] for row in rows]

        bodies = await self.database.write(run, store=_STORE)
        return readable(bodies, ConversationTurn.model_validate_json, store=_STORE)

    async def drop_summary(self, tenant: Tenant) -> bool:
        async def run(connection: Connection) -> bool:
            status = await connection.execute(_DROP_SUMMARY, tenant.agent_id, tenant.user_id)
            return int(status.rsplit(" ", 1)[-1]) > 0

        return await self.database.write(run, store=_STORE)

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
