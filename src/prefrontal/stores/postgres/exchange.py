"""PostgreSQL exchange writer: an exchange, its summary, buffer and trace in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.durable import read_one
from prefrontal.stores.exchange import (
    Exchange,
    Lookup,
    Prior,
    Stamp,
    SummaryChange,
    ready_to_write,
    save_session,
    stored_leaving,
    with_stored_session,
)
from prefrontal.stores.postgres.coalesced import renumbered, returns_rows
from prefrontal.stores.postgres.database import Connection, PostgresDatabase
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.traces import PostgresTraceStore, of_turn, open_trace
from prefrontal.stores.postgres.working_memory import (
    PostgresWorkingMemoryStore,
    parts_of,
    read_parts,
    save_write,
    saved_as,
)
from prefrontal.stores.traces import ended_body
from prefrontal.stores.working_memory import WorkingMemoryStore
from prefrontal.traces.documents import parse

_PRIOR = f"""
SELECT
    (SELECT CASE WHEN $4::boolean OR NOT {open_trace("t")} THEN t.body END FROM traces AS t
     WHERE {of_turn("t")}) AS trace,
    CASE WHEN $5::boolean THEN (SELECT s.body FROM conversation_summaries AS s
        WHERE s.agent_id = $2 AND s.user_id = $3) END AS summary,
    CASE WHEN $5::boolean THEN ARRAY(
        SELECT ROW(c.item_id, c.created_at, c.body) FROM conversation_turns AS c
        WHERE c.agent_id = $2 AND (c.scope = 'shared' OR c.user_id = $3)
        ORDER BY c.created_at DESC, c.seq DESC LIMIT $6) END AS recent,
    CASE WHEN $7::boolean THEN (SELECT {parts_of("w")} FROM wm_sessions AS w
        WHERE w.agent_id = $8 AND w.user_id = $9 AND w.session_id = $10) END AS session"""
"""Everything :meth:`PostgresExchangeWriter.prior` reads, one statement (one snapshot): the
turn's trace (its body when asked for or when it is not open, :func:`.traces.open_trace`),
with the fold the summary and the newest ``$8`` messages the tenant sees, and the session's buffer
state when its store shares the database. The SQL of each part is the store's own
(:mod:`.traces`, :mod:`.conversation`, :mod:`.working_memory`), tenancy included."""


def _ended_locking(last_position: str) -> str:
    """The turn's trace row locked and its body read (none when it is open), then the
    thread's last position, its lock taken first (``last_position``, the SQL of
    :meth:`.memory.PostgresMemoryStore.last_position` from ``$4``): what
    :meth:`~.traces.PostgresTraceStore.ended_in` and
    :meth:`~.memory.PostgresMemoryStore.last_position_in` do, one statement."""
    return f"""
SELECT (SELECT CASE WHEN {open_trace("t")} THEN NULL ELSE t.body END FROM traces AS t
        WHERE {of_turn("t")} FOR UPDATE) AS body,
    {last_position} AS last"""


Write = tuple[str, Sequence[Any]]
"""A write of one statement, with its parameters."""


def together(writes: Sequence[Write]) -> tuple[Any, ...]:
    """One statement making every write of ``writes`` (each an ``INSERT``, ``UPDATE`` or
    ``DELETE`` to a table none of the others writes, in a ``WITH`` of its own, its parameters
    renumbered), and its parameters: the statement returns a column per write, the rows it
    returned (0 for a write returning none)."""
    parts: list[str] = []
    counts: list[str] = []
    args: list[Any] = []
    for n, (statement, values) in enumerate(writes):
        parts.append(f"w{n} AS ({renumbered(statement, len(args))})")
        counts.append(f"(SELECT count(*) FROM w{n})" if returns_rows(statement) else "0")
        args += values
    return ("WITH " + ", ".join(parts) + " SELECT " + ", ".join(counts), *args)


def _prior(row: Any, lookup: Lookup) -> Prior:
    """Read :data:`_PRIOR`'s row."""
    body: str | None = row["trace"]
    ended = body is not None and ended_body(body)
    trace = None
    if body is not None and (lookup.trace or ended):
        trace = read_one(body, parse, store="traces")
    summary, gone = None, tuple[ConversationTurn, ...]()
    if lookup.fold:
        if row["summary"] is not None:
            summary = read_one(
                row["summary"], ConversationSummary.model_validate_json, store="conversation"
            )
        rows = [(r[0], r[1], r[2]) for r in reversed(row["recent"])]
        gone = stored_leaving(rows, lookup, summary)
    session = None
    if row["session"] is not None:
        session = read_parts(lookup.session, row["session"])
    return Prior(ended=ended, trace=trace, summary=summary, leaving=gone, session=session)


class ConversationSql(Protocol):
    """What the writer asks of the PostgreSQL conversation store, inside its transactions."""

    database: PostgresDatabase

    async def append_all_in(
        self, connection: Connection, turns: Sequence[ConversationTurn]
    ) -> None: ...

    async def replace_summary_in(self, connection: Connection, change: SummaryChange) -> bool: ...

    def append_all_write(self, turns: Sequence[ConversationTurn]) -> Write | None: ...

    def replace_summary_write(self, change: SummaryChange) -> Write: ...


class PostgresExchangeWriter:
    """Writes an exchange in one read-committed transaction.

    The turn's trace row is locked (``FOR UPDATE``) before it is checked, so
    a concurrent retry waits and then finds the ending; the thread's
    positions are taken under an advisory lock on the thread. Cancelled
    before the commit, the transaction rolls back: nothing is written. The
    working-memory state is saved in that transaction (one conditional
    statement) when its store shares the database, after the commit
    otherwise. :meth:`prior` is one statement.
    """

    def __init__(
        self,
        conversation: ConversationSql,
        episodic: PostgresMemoryStore,
        traces: PostgresTraceStore,
        working_memory: WorkingMemoryStore,
    ) -> None:
        self.conversation, self.database = conversation, conversation.database
        self.episodic, self.traces, self.working_memory = episodic, traces, working_memory
        self.shared = (
            isinstance(working_memory, PostgresWorkingMemoryStore)
            and working_memory.database is self.database
        )
        self._ended_locking = _ended_locking(episodic.last_position(4))

    async def prior(self, lookup: Lookup) -> Prior:
        """What the exchange's bookkeeping reads first, in one statement (:data:`_PRIOR`)."""
        tenant, key = lookup.tenant, lookup.session
        args = (
            lookup.turn_id,
            tenant.agent_id,
            tenant.user_id,
            lookup.trace,
            lookup.fold,
            lookup.window + lookup.batch,
            self.shared,
            key.agent_id,
            key.user_id,
            key.session_id,
        )

        async def run(connection: Connection) -> Any:
            return await connection.fetchrow(_PRIOR, *args)

        row = await self.database.read(run, store="conversation")
        prior = _prior(row, lookup)
        if self.shared:
            return prior
        return await with_stored_session(prior, self.working_memory, lookup.session)

    async def _placed_in(
        self, connection: Connection, placed: Exchange, stamp: Stamp | None
    ) -> Exchange:
        """Write ``placed`` (its positions taken) inside the caller's transaction: its writes
        in one statement (:func:`together`), but for memories or messages that take more
        than one (then sent first, the store's way)."""
        writes: list[Write] = []
        memories = await self.episodic.put_write(connection, placed.memories)
        if memories is None:
            await self.episodic.put_in(connection, placed.memories)
        else:
            writes.append(memories)
        messages = self.conversation.append_all_write(placed.messages)
        if messages is None:
            await self.conversation.append_all_in(connection, placed.messages)
        else:
            writes.append(messages)
        change, session, trace = placed.summary, placed.session, placed.stamped(stamp)
        summary_at = None
        if change is not None:
            summary_at = len(writes)
            writes.append(self.conversation.replace_summary_write(change))
        saving, session_at = None if session is None else save_write(session), len(writes)
        if saving is not None:
            writes.append(saving[0])
        if trace is not None:
            writes.append(self.traces.put_write(trace))
        returned = await connection.fetchrow(*together(writes)) if writes else ()
        if summary_at is not None and not returned[summary_at]:
            change = None  # another summary came first
        if saving is not None:
            _, saved, stored = saving  # held as read once saved; None: another save came first
            session = saved_as(stored, saved) if returned[session_at] else None
        return placed.model_copy(update={"summary": change, "session": session, "trace": trace})

    async def write(self, exchange: Exchange, stamp: Stamp | None = None) -> Exchange | None:
        embedded = await ready_to_write(exchange, self.episodic.embedder, with_session=self.shared)

        async def run(connection: Connection) -> Exchange | None:
            tenant, turn_id, thread = exchange.tenant, exchange.ended_mark(), exchange.thread_id
            if turn_id is None:
                last = await self.episodic.last_position_in(connection, tenant, thread)
            else:
                row = await connection.fetchrow(
                    self._ended_locking,
                    turn_id,
                    tenant.agent_id,
                    tenant.user_id,
                    *self.episodic.last_position_args(tenant, thread),
                )
                body, last = row[0], int(row[1])
                if body is not None and ended_body(body):
                    return None
            return await self._placed_in(connection, embedded.placed(last + 1), stamp)

        written = await self.database.write(run, store="conversation")
        if written is None or self.shared:
            return written
        saved = await save_session(self.working_memory, exchange.session)
        return written.model_copy(update={"session": saved})
