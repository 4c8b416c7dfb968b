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
exchange as written is returned. Two optional records ride along in the
same transaction, each conditional:

- ``summary``: the tenant's new rolling summary, written only while the
  stored one is still the one it was folded from (its ``through``); else it
  is left out (``None`` in what is returned) and the caller folds again;
- ``session``: the session's working-memory state, saved only while the
  stored version is still ``session.version`` (the optimistic check of
  :class:`~prefrontal.stores.working_memory.WorkingMemoryStore`); returned
  with its new version, or ``None`` when another save came first.

``stamp``, when given, turns the trace into the one written, inside the
transaction, just before it is written (``end_turn`` records its steps' times
there). :meth:`ExchangeWriter.prior` reads, in one read where the backend
can, what the bookkeeping of an exchange needs before it is written: whether
the turn ended (and its trace), the rolling summary, the messages about to
leave the recent window, and the session's working-memory state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol, runtime_checkable

from prefrontal.errors import ConflictError
from prefrontal.retrieval.embedder import Embedder
from prefrontal.stores.conversation import ConversationStore, ConversationSummary, ConversationTurn
from prefrontal.stores.durable import readable
from prefrontal.stores.long_term import MemoryItem, MemoryStore
from prefrontal.stores.memory_search import with_embeddings
from prefrontal.stores.records import NonEmptyId, Record
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceStore
from prefrontal.stores.working_memory import SessionKey, SessionState, WorkingMemoryStore
from prefrontal.traces.models import TurnTrace
from prefrontal.trusted import evolve

Stamp = Callable[[TurnTrace], TurnTrace]


class SummaryChange(Record):
    """A new rolling summary, and the stored one it was folded from (``None``: there was none)."""

    summary: ConversationSummary
    replaces: ConversationSummary | None = None

    def still_current(self, stored: ConversationSummary | None) -> bool:
        """True when ``stored`` is the summary this change was folded from."""
        if stored is None or self.replaces is None:
            return stored is None and self.replaces is None
        return stored.through == self.replaces.through

    def through_matches(self, exists: bool, through: str | None) -> bool:
        """:meth:`still_current` from a stored row's existence and ``through`` alone."""
        if not exists or self.replaces is None:
            return not exists and self.replaces is None
        return through == self.replaces.through


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
    summary: SummaryChange | None = None
    """The rolling summary after this exchange, written if the stored one did not change."""
    session: SessionState | None = None
    """The session's working-memory state, saved if its stored version is ``session.version``."""

    def ended_mark(self) -> str | None:
        """The turn id whose ended trace marks this exchange as written, if any."""
        return None if self.trace is None else self.trace.turn_id

    def placed(self, first: int) -> Exchange:
        """The exchange with its memories at positions ``first``, ``first + 1``, ...

        Each message whose id is a memory's gets that position in its metadata.
        """
        memories = tuple(evolve(m, {"position": first + k}) for k, m in enumerate(self.memories))
        where = {m.item_id: first + k for k, m in enumerate(self.memories)}
        messages = tuple(
            evolve(m, {"metadata": m.metadata | {"position": where[m.item_id]}})
            if m.item_id in where
            else m
            for m in self.messages
        )
        return evolve(self, {"memories": memories, "messages": messages})

    def stamped(self, stamp: Stamp | None) -> TurnTrace | None:
        """The trace to write: ``stamp`` of the exchange's trace (the trace itself without one)."""
        return self.trace if stamp is None or self.trace is None else stamp(self.trace)


@dataclass(frozen=True)
class Lookup:
    """What :meth:`ExchangeWriter.prior` is asked for, before one turn's exchange is written."""

    tenant: Tenant
    turn_id: str
    session: SessionKey
    fold: bool
    """Read what the rolling summary's fold needs (else no summary and no messages)."""
    window: int
    """Phase 4's window: the newest ``window`` messages are shown, not folded."""
    batch: int
    """The fold looks at the newest ``window + batch`` messages."""
    incoming: tuple[ConversationTurn, ...] = ()
    """The exchange's messages, about to be written."""
    trace: bool = False
    """Read the stored trace in full (else only whether it ended)."""


@dataclass(frozen=True)
class Prior:
    """What an exchange's bookkeeping reads before the exchange is written."""

    ended: bool
    """The stored trace of the turn has an ending: the turn was already written."""
    trace: TurnTrace | None
    """The stored trace, when it was asked for (or the turn ended) and exists."""
    summary: ConversationSummary | None
    leaving: tuple[ConversationTurn, ...]
    """The messages the fold takes once the incoming ones are written (see :func:`leaving`)."""
    session: SessionState | None


async def with_stored_session(prior: Prior, store: WorkingMemoryStore, key: SessionKey) -> Prior:
    """``prior`` with the session as ``store`` holds it.

    For a backend whose working memory is not in the exchange's database,
    so the session could not be read in the exchange's read transaction.
    """
    return replace(prior, session=await store.load(key))


async def ready_to_write(
    exchange: Exchange, embedder: Embedder | None, *, with_session: bool
) -> Exchange:
    """``exchange`` with its memories embedded, and its session only when ``with_session``.

    ``with_session`` is true when the backend writes the session in the
    exchange's own transaction; otherwise the session is saved apart.
    """
    ready = tuple(await with_embeddings(list(exchange.memories), embedder))
    update: dict[str, object] = {"memories": ready}
    if not with_session:
        update["session"] = None
    return evolve(exchange, update)


Leaving = list[int | ConversationTurn]
"""Stored messages by their index, incoming ones as themselves, oldest first."""


def leaving(
    stored: Sequence[tuple[str, datetime]],
    incoming: Sequence[ConversationTurn],
    *,
    lookup: Lookup,
    through: str | None,
) -> Leaving:
    """The messages leaving phase 4's window once ``incoming`` is written, that the summary
    (which holds everything up to ``through``) does not hold yet.

    ``stored`` are the ids and times of the tenant's newest stored messages,
    oldest first. Ordered as the store orders them after the write (by time;
    on a tie, what was written later comes later), of the newest
    ``window + batch``, those older than the newest ``window`` that come after
    ``through`` (all of them when ``through`` is not among them). Only the
    stored messages chosen need to be read in full.
    """
    new_ids = {m.item_id for m in incoming}
    merged: list[tuple[datetime, int, int, int | ConversationTurn]] = [
        (at, 0, n, n) for n, (item_id, at) in enumerate(stored) if item_id not in new_ids
    ]
    merged += [(m.created_at, 1, n, m) for n, m in enumerate(incoming)]
    merged.sort(key=lambda entry: entry[:3])
    newest = merged[-(lookup.window + lookup.batch) :] if lookup.window + lookup.batch else []
    older = [entry[3] for entry in newest[: max(len(newest) - lookup.window, 0)]]
    ids = [stored[e][0] if isinstance(e, int) else e.item_id for e in older]
    start = ids.index(through) + 1 if through is not None and through in ids else 0
    return older[start:]


def chosen(
    found: Leaving, parse: Callable[[int], ConversationTurn | None]
) -> tuple[ConversationTurn, ...]:
    """``found`` as messages: each stored one read by ``parse`` (``None``: unreadable, left out)."""
    turns = (parse(e) if isinstance(e, int) else e for e in found)
    return tuple(t for t in turns if t is not None)


def stored_leaving(
    rows: Sequence[tuple[str, datetime, str]],
    lookup: Lookup,
    summary: ConversationSummary | None,
) -> tuple[ConversationTurn, ...]:
    """The messages leaving the window (see :func:`leaving`), from a durable backend's rows.

    ``rows`` are the tenant's newest stored messages as ``(id, time, JSON
    body)``, oldest first. Only the bodies of the stored messages chosen are
    parsed; an unreadable one is left out.
    """
    found = leaving(
        [(item_id, at) for item_id, at, _ in rows],
        lookup.incoming,
        lookup=lookup,
        through=summary.through if summary else None,
    )

    def parse(n: int) -> ConversationTurn | None:
        read = readable([rows[n][2]], ConversationTurn.model_validate_json, store="conversation")
        return read[0] if read else None

    return chosen(found, parse)


@runtime_checkable
class ExchangeWriter(Protocol):
    """Writes an :class:`Exchange` (see the module's contract)."""

    async def prior(self, lookup: Lookup) -> Prior:
        """What the exchange's bookkeeping reads first (see the module)."""
        ...

    async def write(self, exchange: Exchange, stamp: Stamp | None = None) -> Exchange | None:
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

    @property
    def working_memory(self) -> WorkingMemoryStore: ...


def exchange_writer(stores: ExchangeStores) -> ExchangeWriter:
    """The writer for ``stores``: one transaction where the backend has it, ordered writes else."""
    # Looked up on the class: a wrapper (a test double) that forwards attributes must
    # not hand out the wrapped store's writer, which would go around the wrapper.
    offer = getattr(type(stores.conversation), "exchange_writer", None)
    writer = (
        offer(stores.conversation, stores.episodic, stores.traces, stores.working_memory)
        if offer
        else None
    )
    if isinstance(writer, ExchangeWriter):
        return writer
    return OrderedExchangeWriter(
        stores.conversation, stores.episodic, stores.traces, stores.working_memory
    )


def last_position(messages: list[ConversationTurn]) -> int:
    """The highest ``position`` in the messages' metadata (-1 when none has one)."""
    found = [m.metadata.get("position") for m in messages]
    return max((p for p in found if isinstance(p, int)), default=-1)


async def save_session(
    store: WorkingMemoryStore, state: SessionState | None
) -> SessionState | None:
    """``store.save(state)``; ``None`` when there is nothing to save or another save came first."""
    if state is None:
        return None
    try:
        return await store.save(state)
    except ConflictError:
        return None


class OrderedExchangeWriter:
    """Episodic items, then messages, summary, session, then the trace, each through its store.

    Positions continue from the session's latest message. Atomic on stores
    that never suspend; idempotent (same ids) everywhere.
    """

    def __init__(
        self,
        conversation: ConversationStore,
        episodic: MemoryStore,
        traces: TraceStore,
        working_memory: WorkingMemoryStore,
    ) -> None:
        self.conversation, self.episodic, self.traces = conversation, episodic, traces
        self.working_memory = working_memory

    async def prior(self, lookup: Lookup) -> Prior:
        stored = await self.traces.get(lookup.tenant, lookup.turn_id)
        ended = stored is not None and stored.ending is not None
        summary, gone = None, tuple[ConversationTurn, ...]()
        if lookup.fold:
            summary = await self.conversation.get_summary(lookup.tenant)
            limit = lookup.window + lookup.batch
            messages = await self.conversation.recent(lookup.tenant, limit=limit)
            found = leaving(
                [(m.item_id, m.created_at) for m in messages],
                lookup.incoming,
                lookup=lookup,
                through=summary.through if summary else None,
            )
            gone = chosen(found, lambda n: messages[n])
        return Prior(
            ended=ended,
            trace=stored if lookup.trace or ended else None,
            summary=summary,
            leaving=gone,
            session=await self.working_memory.load(lookup.session),
        )

    async def write(self, exchange: Exchange, stamp: Stamp | None = None) -> Exchange | None:
        ready = await with_embeddings(list(exchange.memories), _embedder(self.episodic))
        tenant, turn_id = exchange.tenant, exchange.ended_mark()
        stored = None if turn_id is None else await self.traces.get(tenant, turn_id)
        if stored is not None and stored.ending is not None:
            return None
        latest = await self.conversation.recent(tenant, limit=1, session_id=exchange.session_id)
        placed = evolve(exchange, {"memories": tuple(ready)}).placed(last_position(latest) + 1)
        await self.episodic.put_many(list(placed.memories))
        for message in placed.messages:
            await self.conversation.append(message)
        summary = await self._summary(placed.summary)
        session = await save_session(self.working_memory, placed.session)
        trace = placed.stamped(stamp)
        if trace is not None:
            await self.traces.put(trace)
        return evolve(placed, {"summary": summary, "session": session, "trace": trace})

    async def _summary(self, change: SummaryChange | None) -> SummaryChange | None:
        if change is None:
            return None
        if not change.still_current(await self.conversation.get_summary(_tenant(change))):
            return None
        await self.conversation.put_summary(change.summary)
        return change


def _tenant(change: SummaryChange) -> Tenant:
    return Tenant(agent_id=change.summary.agent_id, user_id=change.summary.user_id)


def _embedder(store: MemoryStore) -> Embedder | None:
    embedder: Embedder | None = getattr(store, "embedder", None)
    return embedder
