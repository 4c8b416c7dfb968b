"""Writing a LoCoMo conversation into a set of stores through their public APIs.

Every turn goes in twice, under one id: as conversation history (so the
pipeline's recent-conversation phase sees the end of the last session) and
as an episodic memory item in the thread of its session, with its speaker,
session date and ``dia_id`` in the metadata. Observations and session
summaries, when asked for, become semantic items whose metadata names the
turn (or the session) they came from.

Embeddings, when the stores have an embedder, are computed by the stores
as the items are written.

``Coverage`` maps every item id written to the turns it stands for: a turn
covers itself, an observation the one turn it came from, a summary none.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from prefrontal.evaluation.locomo import Conversation, Note, Turn
from prefrontal.stores.conversation import ConversationTurn, Role
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


def session_date(date: datetime) -> str:
    """A session date as it is indexed (``8 May 2023``)."""
    return f"{date.day} {date:%B %Y}"


def conversation_turn(conv: Conversation, turn: Turn, tenant: Tenant) -> ConversationTurn:
    """A turn as conversation history (the first speaker is the user)."""
    return ConversationTurn(
        item_id=turn_id(conv.sample_id, turn.dia_id),
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        session_id=f"session_{turn.session}",
        role=Role.USER if turn.speaker == conv.speakers[0] else Role.ASSISTANT,
        content=turn.text,
        speaker=turn.speaker,
        created_at=turn_time(turn),
        metadata={"dia_id": turn.dia_id, "date": session_date(turn.date)},
    )


def episodic_item(conv: Conversation, turn: Turn, tenant: Tenant) -> MemoryItem:
    """A turn as an episodic memory in its session's thread."""
    return MemoryItem(
        item_id=turn_id(conv.sample_id, turn.dia_id),
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        kind=MemoryKind.EVENT,
        content=turn.text,
        occurred_at=turn_time(turn),
        created_at=turn_time(turn),
        thread_id=f"{conv.sample_id}:session_{turn.session}",
        position=turn.index,
        metadata={
            "speaker": turn.speaker,
            "date": session_date(turn.date),
            "dia_id": turn.dia_id,
        },
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
    """Write every turn as history and as an episodic item; each covers itself."""
    for turn in conv.turns:
        await stores.conversation.append(conversation_turn(conv, turn, tenant))
    items = [episodic_item(conv, t, tenant) for t in conv.turns]
    await stores.episodic.put_many(items)
    return {i.item_id: frozenset({str(i.metadata["dia_id"])}) for i in items}


async def ingest_notes(stores: Stores, conv: Conversation, tenant: Tenant) -> Coverage:
    """Write observations and summaries as semantic items; an observation covers its turn."""
    notes = [*conv.observations, *conv.summaries]
    items = [note_item(conv, n, k, tenant) for k, n in enumerate(notes)]
    await stores.semantic.put_many(items)
    pairs = zip(items, notes, strict=True)
    return {i.item_id: frozenset({n.source} if n.source else ()) for i, n in pairs}
