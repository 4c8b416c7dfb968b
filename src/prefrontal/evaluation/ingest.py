"""Writing a LoCoMo conversation into a set of stores through the path ``end_turn`` takes.

Each session of the conversation is one exchange (:mod:`prefrontal.exchange.records`)
written by the stores' exchange writer (:func:`~prefrontal.stores.exchange.exchange_writer`),
as ``Orchestrator.end_turn`` writes a turn: every utterance goes in twice,
under one id, as conversation history (so the pipeline's
recent-conversation phase sees the end of the last session) and as an
episodic memory item in the thread of its session at its position, with its
speaker, session date and ``dia_id`` in the metadata. Observations and
session summaries, when asked for, become semantic items whose metadata
names the turn (or the session) they came from.

Embeddings, when the stores have an embedder, are computed by the stores
as the items are written.

``Coverage`` maps every item id written to the turns it stands for: a turn
covers itself, an observation the one turn it came from, a summary none.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import groupby

from prefrontal.evaluation.locomo import Conversation, Note, Turn
from prefrontal.exchange.records import Utterance, exchange, session_date
from prefrontal.stores.conversation import Role
from prefrontal.stores.exchange import exchange_writer
from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant

Coverage = dict[str, frozenset[str]]
"""Item id -> the ``dia_id``s a context holding that item holds."""


def turn_id(sample_id: str, dia_id: str) -> str:
    """The id a turn is stored under, in both stores."""
    return f"{sample_id}:{dia_id}"


def turn_time(turn: Turn) -> datetime:
    """When a turn was said: its session's time, a second per turn after it."""
    return turn.date + timedelta(seconds=turn.index)


def utterance(conv: Conversation, turn: Turn) -> Utterance:
    """A turn as an utterance of its session (the first speaker is the user)."""
    return Utterance(
        item_id=turn_id(conv.sample_id, turn.dia_id),
        role=Role.USER if turn.speaker == conv.speakers[0] else Role.ASSISTANT,
        content=turn.text,
        at=turn_time(turn),
        speaker=turn.speaker,
        metadata={"dia_id": turn.dia_id, "date": session_date(turn.date)},
    )


def note_item(conv: Conversation, note: Note, number: int, tenant: Tenant) -> MemoryItem:
    """An observation (metadata ``source`` = its turn) or a session summary."""
    kind = MemoryKind.OBSERVATION if note.source else MemoryKind.SUMMARY
    source = note.source or f"session_{note.session}"
    return MemoryItem(
        item_id=f"{conv.sample_id}:{kind.value}:{number}",
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        kind=kind,
        content=note.text,
        occurred_at=note.date,
        created_at=note.date,
        metadata={"date": session_date(note.date), "source": source},
    )


async def ingest_turns(stores: Stores, conv: Conversation, tenant: Tenant) -> Coverage:
    """Write each session as one exchange (history and episodic items); each turn covers itself."""
    writer = exchange_writer(stores)
    for session, turns in groupby(conv.turns, key=lambda t: t.session):
        await writer.write(
            exchange(
                [utterance(conv, t) for t in turns],
                tenant=tenant,
                session_id=f"session_{session}",
                thread_id=f"{conv.sample_id}:session_{session}",
            )
        )
    return {turn_id(conv.sample_id, t.dia_id): frozenset({t.dia_id}) for t in conv.turns}


async def ingest_notes(stores: Stores, conv: Conversation, tenant: Tenant) -> Coverage:
    """Write observations and summaries as semantic items; an observation covers its turn."""
    notes = [*conv.observations, *conv.summaries]
    items = [note_item(conv, n, k, tenant) for k, n in enumerate(notes)]
    await stores.semantic.put_many(items)
    pairs = zip(items, notes, strict=True)
    return {i.item_id: frozenset({n.source} if n.source else ()) for i, n in pairs}
