"""PostgreSQL exchange writer: an exchange, its summary, buffer and trace in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.exchange import (
    Exchange,
    Lookup,
    Prior,
    Stamp,
    SummaryChange,
    ready_to_write,
    save_session,
    with_stored_session,
)
from prefrontal.stores.postgres.database import Connection, PostgresDatabase
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.traces import PostgresTraceStore
from prefrontal.stores.postgres.working_memory import (
    PostgresWorkingMemoryStore,
    load_in,
    save_in,
)
from prefrontal.stores.working_memory import WorkingMemoryStore


class ConversationSql(Protocol):
    """What the writer asks of the PostgreSQL conversation store, inside its transactions."""

    database: PostgresDatabase

    async def append_all_in(
        self, connection: Connection, turns: Sequence[ConversationTurn]
    ) -> None: ...

    async def leaving_in(
        self, connection: Connection, lookup: Lookup
    ) -> tuple[ConversationSummary | None, tuple[ConversationTurn, ...]]: ...

    async def replace_summary_in(self, connection: Connection, change: SummaryChange) -> bool: ...


class PostgresExchangeWriter:
    """Writes an exchange in one read-committed transaction.

    The turn's trace row is locked (``FOR UPDATE``) before it is checked, so
    a concurrent retry waits and then finds the ending; the thread's
    positions are taken under an advisory lock on the thread. Cancelled
    before the commit, the transaction rolls back: nothing is written. The
    working-memory state is saved in that transaction (one conditional
    statement) when its store shares the database, after the commit
    otherwise. :meth:`prior` is one read-only transaction.
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

    async def prior(self, lookup: Lookup) -> Prior:
        async def run(connection: Connection) -> Prior:
            tenant, turn_id = lookup.tenant, lookup.turn_id
            trace = None
            ended = await self.traces.ended_in(connection, tenant, turn_id, lock=False)
            if lookup.trace or ended:
                trace = await self.traces.get_in(connection, tenant, turn_id)
            summary, gone = None, tuple[ConversationTurn, ...]()
            if lookup.fold:
                summary, gone = await self.conversation.leaving_in(connection, lookup)
            session = await load_in(connection, lookup.session) if self.shared else None
            return Prior(ended=ended, trace=trace, summary=summary, leaving=gone, session=session)

        prior = await self.database.read(run, store="conversation")
        if self.shared:
            return prior
        return await with_stored_session(prior, self.working_memory, lookup.session)

    async def write(self, exchange: Exchange, stamp: Stamp | None = None) -> Exchange | None:
        embedded = await ready_to_write(exchange, self.episodic.embedder, with_session=self.shared)

        async def run(connection: Connection) -> Exchange | None:
            tenant, turn_id = exchange.tenant, exchange.ended_mark()
            if turn_id is not None and await self.traces.ended_in(connection, tenant, turn_id):
                return None
            last = await self.episodic.last_position_in(connection, tenant, exchange.thread_id)
            placed = embedded.placed(last + 1)
            await self.episodic.put_in(connection, placed.memories)
            await self.conversation.append_all_in(connection, placed.messages)
            change = placed.summary
            if change is not None and not await self.conversation.replace_summary_in(
                connection, change
            ):
                change = None
            session = None
            if placed.session is not None:
                session = await save_in(connection, placed.session)
            trace = placed.stamped(stamp)
            if trace is not None:
                await self.traces.put_in(connection, trace)
            return placed.model_copy(update={"summary": change, "session": session, "trace": trace})

        written = await self.database.write(run, store="conversation")
        if written is None or self.shared:
            return written
        saved = await save_session(self.working_memory, exchange.session)
        return written.model_copy(update={"session": saved})
