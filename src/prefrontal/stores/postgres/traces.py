"""PostgreSQL trace store: every sealed turn trace, as JSON with its filter columns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from prefrontal.stores.durable import SharesDatabase, dump, read_one, readable
from prefrontal.stores.postgres.database import (
    Connection,
    PostgresDatabase,
    erase_statement,
    storable,
)
from prefrontal.stores.postgres.turn_reads import StateRead
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import (
    OPEN_SUFFIX,
    TraceQuery,
    ended_body,
    search_words,
    searched_text,
    text_words,
)
from prefrontal.traces.documents import parse, remember
from prefrontal.traces.models import TurnTrace

_STORE = "traces"


def of_turn(alias: str = "traces") -> str:
    """SQL: trace ``alias`` is turn ``$1``'s, of agent ``$2``'s user ``$3``; found by its
    primary key whatever the planner's statistics say.

    The agent is compared as an expression, so no index of the agent's traces can serve the
    read: a plan made before the table's first analysis prefers one, and reads every trace
    of the user to find one turn's.
    """
    return f"{alias}.turn_id = $1 AND ({alias}.agent_id || '') = $2 AND {alias}.user_id = $3"


_FIELD, _, _OPEN_VALUE = OPEN_SUFFIX.partition(":")


def open_trace(alias: str = "traces") -> str:
    """SQL: the body of trace ``alias`` ends as an open trace's (:data:`OPEN_SUFFIX`), true or
    false, never NULL.

    What ``right(body, n) = suffix`` says, for far less of the server's CPU: ``right``
    counts the characters of the whole body (tens of kilobytes) to find its last ones,
    where this looks for the suffix's field name (``,"ending":``) with the server's
    substring search, which skips along the bytes, and compares what follows its last
    occurrence with the open value (``null}``). The field name occurs nowhere inside the
    suffix after its start, so a body ends with the suffix exactly when the name occurs and
    only the open value follows its last occurrence; a body holding no occurrence is
    returned whole by ``split_part``, and is longer than the open value unless it is it.
    """
    body = f"{alias}.body"
    return (
        f"(octet_length({body}) > {len(_OPEN_VALUE.encode())} AND split_part({body} "
        f"COLLATE \"C\", '{_FIELD}:', -1) = '{_OPEN_VALUE}')"
    )


_GET = StateRead("body", f"FROM traces WHERE {of_turn()}")

_PUT = """
INSERT INTO traces (turn_id, parent_turn_id, agent_id, user_id, session_id, status, started_at,
    body, words)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_tsvector('simple', $9))
ON CONFLICT (turn_id) DO UPDATE SET
    parent_turn_id = excluded.parent_turn_id, agent_id = excluded.agent_id,
    user_id = excluded.user_id, session_id = excluded.session_id, status = excluded.status,
    started_at = excluded.started_at, body = excluded.body, words = excluded.words
"""
"""A trace and the words a search finds it by (its message and reply, ``$9``)."""

_ENDED = f"""
SELECT CASE WHEN {open_trace()} THEN NULL ELSE body END AS body FROM traces
WHERE {of_turn()}"""
"""The body of a trace that is not open (:func:`open_trace`): none is sent for an open one."""


def _row(trace: TurnTrace) -> tuple[object, ...]:
    return (
        trace.turn_id,
        trace.parent_turn_id,
        trace.agent_id,
        trace.user_id,
        trace.session_id,
        trace.status.value,
        trace.started_at,
        _body(trace),
        " ".join(text_words(searched_text(trace))),
    )


def _body(trace: TurnTrace) -> str:
    """``trace``'s JSON, remembered as it: the turn's end reads it back without parsing."""
    body = dump(trace, store=_STORE)
    remember(body, trace)
    return body


class PostgresTraceStore(SharesDatabase[PostgresDatabase]):
    """Traces in ``traces``, keyed by turn id."""

    async def put(self, trace: TurnTrace) -> None:
        await self.database.execute(_PUT, *_row(trace), store=_STORE)

    async def put_in(self, connection: Connection, trace: TurnTrace) -> None:
        """Save ``trace`` inside the caller's transaction."""
        await connection.execute(_PUT, *_row(trace))

    def put_write(self, trace: TurnTrace) -> tuple[str, tuple[object, ...]]:
        """What :meth:`put_in` sends for ``trace``: the statement and its parameters (to be
        sent with other writes, :mod:`.exchange`)."""
        return _PUT, _row(trace)

    async def ended_in(
        self, connection: Connection, tenant: Tenant, turn_id: str, *, lock: bool = True
    ) -> bool:
        """True when the tenant's trace of ``turn_id`` has an ending.

        With ``lock`` the row stays locked until the transaction ends. Only the
        body of a trace that is not open is sent and parsed.
        """
        row = await connection.fetchrow(
            _ENDED + (" FOR UPDATE" if lock else ""),
            turn_id,
            tenant.agent_id,
            tenant.user_id,
        )
        return row is not None and row["body"] is not None and ended_body(row["body"])

    async def get_in(
        self, connection: Connection, tenant: Tenant, turn_id: str
    ) -> TurnTrace | None:
        """The tenant's trace of ``turn_id``, read inside the caller's transaction."""
        if not storable(turn_id):
            return None
        body = await connection.fetchval(_GET.statement, turn_id, tenant.agent_id, tenant.user_id)
        return None if body is None else read_one(body, parse, store=_STORE)

    async def get(self, tenant: Tenant, turn_id: str) -> TurnTrace | None:
        if not storable(turn_id):
            return None
        args = (turn_id, tenant.agent_id, tenant.user_id)
        rows = await self.database.state_rows(_GET, *args, store=_STORE)
        return read_one(rows[0][0], parse, store=_STORE) if rows else None

    async def list(self, query: TraceQuery) -> list[TurnTrace]:
        sql, params = _select(query)
        if sql is None:
            return []

        async def run(connection: Connection) -> list[TurnTrace]:
            rows = await connection.fetch(sql, *params)
            return readable((r[0] for r in rows), parse, store=_STORE)

        return await self.database.read(run, store=_STORE)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.count(
            erase_statement("traces"), tenant.agent_id, tenant.user_id, store=_STORE
        )

    async def prune(self, *, before: datetime | None = None, keep: int | None = None) -> int:
        async def run(connection: Connection) -> int:
            removed = 0
            if before is not None:
                status = await connection.execute(
                    "DELETE FROM traces WHERE started_at < $1", before
                )
                removed += int(status.split()[-1])
            if keep is not None:
                status = await connection.execute(_BEYOND_NEWEST, keep)
                removed += int(status.split()[-1])
            return removed

        return await self.database.write(run, store=_STORE)


_BEYOND_NEWEST = """
DELETE FROM traces WHERE turn_id NOT IN (
    SELECT turn_id FROM traces ORDER BY started_at DESC, turn_id COLLATE "C" DESC LIMIT $1
)
"""


def _narrowed(query: TraceQuery, where: list[str], params: list[Any]) -> bool:
    """Add the users and the words of ``query`` to ``where``; ``False`` if no trace can match."""
    if query.user_ids is not None:
        params.append([user for user in query.user_ids if storable(user)])
        where.append(f"user_id = ANY(${len(params)}::text[])")
    if query.text is not None:
        words = search_words(query.text)
        if not words:
            return False
        params.append(" ".join(words))
        where.append(f"words @@ plainto_tsquery('simple', ${len(params)})")
    return True


def _select(query: TraceQuery) -> tuple[str | None, list[Any]]:
    """The SQL and parameters of ``query`` (``None``: an id no trace can have, or no word)."""
    filters: list[tuple[str, Any]] = [
        ("turn_id =", query.turn_id),
        ("parent_turn_id =", query.parent_turn_id),
        ("agent_id =", query.agent_id),
        ("user_id =", query.user_id),
        ("session_id =", query.session_id),
        ("status =", None if query.status is None else query.status.value),
        ("started_at >=", query.since),
        ("started_at <", query.until),
    ]
    where: list[str] = []
    params: list[Any] = []
    for clause, value in filters:
        if value is None:
            continue
        if isinstance(value, str) and not storable(value):
            return None, []
        params.append(value)
        where.append(f"{clause} ${len(params)}")
    if query.older_than is not None:
        at, turn_id = query.older_than
        if not storable(turn_id):
            return None, []
        params.extend((at, turn_id))
        at_n, id_n = len(params) - 1, len(params)
        where.append(
            f'(started_at < ${at_n} OR (started_at = ${at_n} AND turn_id COLLATE "C" < ${id_n}))'
        )
    if query.newer_than is not None:
        at, turn_id = query.newer_than
        if not storable(turn_id):
            return None, []
        params.extend((at, turn_id))
        at_n, id_n = len(params) - 1, len(params)
        where.append(
            f'(started_at > ${at_n} OR (started_at = ${at_n} AND turn_id COLLATE "C" > ${id_n}))'
        )
    if not _narrowed(query, where, params):
        return None, []
    order = "ASC" if query.oldest_first else "DESC"
    params.append(query.limit)
    sql = (
        f"SELECT body FROM traces WHERE {' AND '.join(where) or 'true'}"
        f' ORDER BY started_at {order}, turn_id COLLATE "C" {order} LIMIT ${len(params)}'
    )
    return sql, params
