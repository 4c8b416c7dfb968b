"""Writing one exchange (a turn's messages, memories and ended trace) all or nothing.

An exchange is what ``end_turn`` writes: the turn's messages into the
conversation store, the same messages (and tool calls) as episodic items in
the session's thread, and the turn's trace with its ending, the mark that
the turn ended. :class:`ExchangeWriter` is the narrow capability that writes
it; :func:`exchange_writer` picks one for a set of stores:

- when the conversation store offers ``exchange_writer(episodic, traces)``
  (the SQLite and PostgreSQL stores do, when the other two share their
  database) that writer runs everything in one transaction;
- otherwise :class:`OrderedExchangeWriter` writes episodic items, then
  messages, then the trace. On stores that never suspend (the in-memory
  ones) nothing can come between those calls, so it is atomic too; on mixed
  backends a write cut short leaves no trace ending, and the retry rewrites
  the same ids, so nothing is written twice.

Contract of every writer: if the exchange has a trace and the stored trace
of its turn already has an ending, nothing is written and ``None`` is
returned; otherwise the
episodic items get the next positions of their thread (after the highest
one held), each message's metadata its item's ``position``, and the
exchange as written is returned.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from prefrontal.retrieval.embedder import Embedder
from prefrontal.stores.conversation import ConversationStore, ConversationTurn
from prefrontal.stores.long_term import MemoryItem, MemoryStore
from prefrontal.stores.memory_search import with_embeddings
from prefrontal.stores.records import NonEmptyId, Record
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceStore
from prefrontal.traces.models import TurnTrace


class Exchange(Record):
    """One turn's records, written together by an :class:`ExchangeWriter`."""

    tenant: Tenant
    session_id: NonEmptyId
    thread_id: NonEmptyId
    messages: tuple[ConversationTurn, ...]
    memories: tuple[MemoryItem, ...]
    """In thread order; the writer gives them their positions."""
    trace: TurnTrace | None = None
    """The turn's trace with its ending: written last, in the same transaction.

    ``None`` for history imported from elsewhere (no turn to mark): then
    only the records' ids make a second write harmless.
    """

    def ended_mark(self) -> str | None:
        """The turn id whose ended trace marks this exchange as written, if any."""
        return None if self.trace is None else self.trace.turn_id

    def placed(self, first: int) -> Exchange:
        """The exchange with its memories at positions ``first``, ``first + 1``, ...

        Each message whose id is a memory's gets that position in its metadata.
        """
        memories = tuple(
            m.model_copy(update={"position": first + k}) for k, m in enumerate(self.memories)
        )
        where = {m.item_id: m.position for m in memories if m.position is not None}
        messages = tuple(
            m.model_copy(update={"metadata": m.metadata | {"position": where[m.item_id]}})
            if m.item_id in where
            else m
            for m in self.messages
        )
        return self.model_copy(update={"memories": memories, "messages": messages})


@runtime_checkable
class ExchangeWriter(Protocol):
    """Writes an :class:`Exchange` (see the module's contract)."""

    async def write(self, exchange: Exchange) -> Exchange | None:
        """Write ``exchange``; ``None`` (and nothing written) when the turn had already ended."""
        ...


class ExchangeStores(Protocol):
    """The stores an exchange is written to (a :class:`~prefrontal.stores.Stores` is one)."""

    @property
    def conversation(self) -> ConversationStore: ...

    @property
    def episodic(self) -> MemoryStore: ...

    @property
    def traces(self) -> TraceStore: ...


def exchange_writer(stores: ExchangeStores) -> ExchangeWriter:
    """The writer for ``stores``: one transaction where the backend has it, ordered writes else."""
    # Looked up on the class: a wrapper (a test double) that forwards attributes must
    # not hand out the wrapped store's writer, which would go around the wrapper.
    offer = getattr(type(stores.conversation), "exchange_writer", None)
    writer = offer(stores.conversation, stores.episodic, stores.traces) if offer else None
    if isinstance(writer, ExchangeWriter):
        return writer
    return OrderedExchangeWriter(stores.conversation, stores.episodic, stores.traces)


def last_position(messages: list[ConversationTurn]) -> int:
    """The highest ``position`` in the messages' metadata (-1 when none has one)."""
    found = [m.metadata.get("position") for m in messages]
    return max((p for p in found if isinstance(p, int)), default=-1)


class OrderedExchangeWriter:
    """Episodic items, then messages, then the trace, each through its store's own API.

    Positions continue from the session's latest message. Atomic on stores
    that never suspend; idempotent (same ids) everywhere.
    """

    def __init__(
        self, conversation: ConversationStore, episodic: MemoryStore, traces: TraceStore
    ) -> None:
        self.conversation, self.episodic, self.traces = conversation, episodic, traces

    async def write(self, exchange: Exchange) -> Exchange | None:
        ready = await with_embeddings(list(exchange.memories), _embedder(self.episodic))
        tenant, turn_id = exchange.tenant, exchange.ended_mark()
        stored = None if turn_id is None else await self.traces.get(tenant, turn_id)
        if stored is not None and stored.ending is not None:
            return None
        latest = await self.conversation.recent(tenant, limit=1, session_id=exchange.session_id)
        placed = exchange.model_copy(update={"memories": tuple(ready)}).placed(
            last_position(latest) + 1
        )
        await self.episodic.put_many(list(placed.memories))
        for message in placed.messages:
            await self.conversation.append(message)
        if placed.trace is not None:
            await self.traces.put(placed.trace)
        return placed


def _embedder(store: MemoryStore) -> Embedder | None:
    embedder: Embedder | None = getattr(store, "embedder", None)
    return embedder
