"""PostgreSQL exchange writer: messages, episodic items and the ended trace in one transaction."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from prefrontal.stores.conversation import ConversationTurn
from prefrontal.stores.exchange import Exchange
from prefrontal.stores.memory_search import with_embeddings
from prefrontal.stores.postgres.database import Connection, PostgresDatabase
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.stores.postgres.traces import PostgresTraceStore

Append = Callable[[Connection, ConversationTurn], Awaitable[None]]


class PostgresExchangeWriter:
    """Writes an exchange in one read-committed transaction.

    The turn's trace row is locked (``FOR UPDATE``) before it is checked, so
    a concurrent retry waits and then finds the ending; the thread's
    positions are taken under an advisory lock on the thread. Cancelled
    before the commit, the transaction rolls back: nothing is written.
    """

    def __init__(
        self,
        database: PostgresDatabase,
        append: Append,
        episodic: PostgresMemoryStore,
        traces: PostgresTraceStore,
    ) -> None:
        self.database, self.append = database, append
        self.episodic, self.traces = episodic, traces

    async def write(self, exchange: Exchange) -> Exchange | None:
        ready = await with_embeddings(list(exchange.memories), self.episodic.embedder)
        embedded = exchange.model_copy(update={"memories": tuple(ready)})

        async def run(connection: Connection) -> Exchange | None:
            tenant, turn_id = exchange.tenant, exchange.ended_mark()
            if turn_id is not None and await self.traces.ended_in(connection, tenant, turn_id):
                return None
            last = await self.episodic.last_position_in(connection, tenant, exchange.thread_id)
            placed = embedded.placed(last + 1)
            await self.episodic.put_in(connection, placed.memories)
            for message in placed.messages:
                await self.append(connection, message)
            if placed.trace is not None:
                await self.traces.put_in(connection, placed.trace)
            return placed

        return await self.database.write(run, store="conversation")
