"""SQLite exchange writer: messages, episodic items and the ended trace in one transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from prefrontal.stores.conversation import ConversationTurn
from prefrontal.stores.exchange import Exchange
from prefrontal.stores.memory_search import with_embeddings
from prefrontal.stores.sqlite.database import Database
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.traces import SqliteTraceStore

Append = Callable[[sqlite3.Connection, ConversationTurn], None]


class SqliteExchangeWriter:
    """Writes an exchange in one write transaction on the shared database.

    The check that the turn has not ended, the thread's next position and
    every write happen under SQLite's single writer, so two calls never
    interleave: a retry finds the ending and writes nothing.
    """

    def __init__(
        self,
        database: Database,
        append: Append,
        episodic: SqliteMemoryStore,
        traces: SqliteTraceStore,
    ) -> None:
        self.database, self.append = database, append
        self.episodic, self.traces = episodic, traces

    async def write(self, exchange: Exchange) -> Exchange | None:
        ready = await with_embeddings(list(exchange.memories), self.episodic.embedder)
        embedded = exchange.model_copy(update={"memories": tuple(ready)})

        def run(connection: sqlite3.Connection) -> Exchange | None:
            tenant, turn_id = exchange.tenant, exchange.ended_mark()
            if turn_id is not None and self.traces.ended_in(connection, tenant, turn_id):
                return None
            last = self.episodic.last_position_in(connection, tenant, exchange.thread_id)
            placed = embedded.placed(last + 1)
            self.episodic.put_in(connection, placed.memories)
            for message in placed.messages:
                self.append(connection, message)
            if placed.trace is not None:
                self.traces.put_in(connection, placed.trace)
            return placed

        return await self.database.write(run, store="conversation")
