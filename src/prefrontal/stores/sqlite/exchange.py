"""SQLite exchange writer: an exchange, its summary, buffer and trace in one transaction."""

from __future__ import annotations

import sqlite3
from typing import Protocol

from prefrontal.errors import ConflictError
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
from prefrontal.stores.sqlite.database import Database
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.traces import SqliteTraceStore
from prefrontal.stores.sqlite.working_memory import (
    SqliteWorkingMemoryStore,
    load_in,
    loads_quickly,
    save_in,
)
from prefrontal.stores.working_memory import SessionState, WorkingMemoryStore


class ConversationSql(Protocol):
    """What the writer asks of the SQLite conversation store, inside its transactions."""

    database: Database

    def append_in(self, connection: sqlite3.Connection, turn: ConversationTurn) -> None: ...

    def leaving_in(
        self, connection: sqlite3.Connection, lookup: Lookup
    ) -> tuple[ConversationSummary | None, tuple[ConversationTurn, ...]]: ...

    def replace_summary_in(self, connection: sqlite3.Connection, change: SummaryChange) -> bool: ...


class SqliteExchangeWriter:
    """Writes an exchange in one write transaction on the shared database.

    The check that the turn has not ended, the thread's next position and
    every write happen under SQLite's single writer, so two calls never
    interleave: a retry finds the ending and writes nothing. The
    working-memory state is saved in that transaction when its store shares
    the database, after the commit otherwise. :meth:`prior` is one read
    transaction (the working-memory state, on another database, one more read).
    """

    def __init__(
        self,
        conversation: ConversationSql,
        episodic: SqliteMemoryStore,
        traces: SqliteTraceStore,
        working_memory: WorkingMemoryStore,
    ) -> None:
        self.conversation, self.database = conversation, conversation.database
        self.episodic, self.traces, self.working_memory = episodic, traces, working_memory
        self.shared = (
            isinstance(working_memory, SqliteWorkingMemoryStore)
            and working_memory.database is self.database
        )

    async def prior(self, lookup: Lookup) -> Prior:
        def run(connection: sqlite3.Connection) -> Prior:
            trace = None
            if lookup.trace:
                trace = self.traces.get_in(connection, lookup.tenant, lookup.turn_id)
                ended = trace is not None and trace.ending is not None
            else:
                ended = self.traces.ended_in(connection, lookup.tenant, lookup.turn_id)
                if ended:
                    trace = self.traces.get_in(connection, lookup.tenant, lookup.turn_id)
            summary, gone = None, tuple[ConversationTurn, ...]()
            if lookup.fold:
                summary, gone = self.conversation.leaving_in(connection, lookup)
            session = load_in(connection, lookup.session) if self.shared else None
            return Prior(ended=ended, trace=trace, summary=summary, leaving=gone, session=session)

        # it follows the turn's own writes (its trace, its session), read where they are warm;
        # a few rows by key, and the session's state when it is held and small: a quick read
        quick = not self.shared or loads_quickly(lookup.session)
        prior = await self.database.read(run, store="conversation", after_write=True, quick=quick)
        if self.shared:
            return prior
        return await with_stored_session(prior, self.working_memory, lookup.session)

    async def write(self, exchange: Exchange, stamp: Stamp | None = None) -> Exchange | None:
        embedded = await ready_to_write(exchange, self.episodic.embedder, with_session=self.shared)

        def run(connection: sqlite3.Connection) -> Exchange | None:
            tenant, turn_id = exchange.tenant, exchange.ended_mark()
            if turn_id is not None and self.traces.ended_in(connection, tenant, turn_id):
                return None
            last = self.episodic.last_position_in(connection, tenant, exchange.thread_id)
            placed = embedded.placed(last + 1)
            self.episodic.put_in(connection, placed.memories)
            for message in placed.messages:
                self.conversation.append_in(connection, message)
            change = placed.summary
            if change is not None and not self.conversation.replace_summary_in(connection, change):
                change = None
            session = _save_in(connection, placed.session)
            trace = placed.stamped(stamp)
            if trace is not None:
                self.traces.put_in(connection, trace)
            return placed.model_copy(update={"summary": change, "session": session, "trace": trace})

        written = await self.database.write(run, store="conversation")
        if written is None or self.shared:
            return written
        saved = await save_session(self.working_memory, exchange.session)
        return written.model_copy(update={"session": saved})


def _save_in(connection: sqlite3.Connection, state: SessionState | None) -> SessionState | None:
    if state is None:
        return None
    try:
        return save_in(connection, state)
    except ConflictError:
        return None
