"""The records of one exchange: what ``end_turn`` (and the LoCoMo ingestion) write.

An exchange is a short run of :class:`Utterance` s (the user's input, tool
calls, the reply). Each becomes an episodic item in the session's thread,
with its speaker, date, turn and parent turn in the metadata; the spoken
ones (user and assistant) also become conversation messages under the same
id. Ids are derived from the turn id, so writing an exchange twice writes
the same records.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import ConfigDict, Field

from prefrontal.model_reads import FastReads
from prefrontal.stores.conversation import ConversationTurn, Role
from prefrontal.stores.exchange import Exchange
from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.records import MetadataValue
from prefrontal.stores.tenancy import Tenant
from prefrontal.traces.models import TurnTrace

SPOKEN = (Role.USER, Role.ASSISTANT)


class Utterance(FastReads):
    """One thing said or done in an exchange."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str = Field(min_length=1, max_length=256)
    role: Role
    content: str = Field(min_length=1)
    at: datetime
    speaker: str | None = None
    """The speaker's name where it is known (shown instead of the role)."""
    kind: MemoryKind = MemoryKind.EVENT
    metadata: dict[str, MetadataValue] = Field(default_factory=dict)


def session_date(at: datetime) -> str:
    """A date as it is indexed and shown (``8 May 2023``)."""
    return f"{at.day} {at:%B %Y}"


def message(utterance: Utterance, tenant: Tenant, session_id: str) -> ConversationTurn:
    """An utterance as a conversation message."""
    return ConversationTurn(
        item_id=utterance.item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        session_id=session_id,
        role=utterance.role,
        content=utterance.content,
        speaker=utterance.speaker,
        created_at=utterance.at,
        metadata=dict(utterance.metadata),
    )


def memory(utterance: Utterance, tenant: Tenant, thread_id: str) -> MemoryItem:
    """An utterance as an episodic item of the thread (positioned by the writer)."""
    speaker = utterance.speaker or utterance.role.value
    return MemoryItem(
        item_id=utterance.item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        kind=utterance.kind,
        content=utterance.content,
        occurred_at=utterance.at,
        created_at=utterance.at,
        thread_id=thread_id,
        metadata={"speaker": speaker, "date": session_date(utterance.at), **utterance.metadata},
    )


def exchange(
    utterances: Sequence[Utterance],
    *,
    tenant: Tenant,
    session_id: str,
    thread_id: str,
    trace: TurnTrace | None = None,
) -> Exchange:
    """The records of ``utterances``: messages for the spoken ones, a memory for each."""
    return Exchange(
        tenant=tenant,
        session_id=session_id,
        thread_id=thread_id,
        messages=tuple(message(u, tenant, session_id) for u in utterances if u.role in SPOKEN),
        memories=tuple(memory(u, tenant, thread_id) for u in utterances),
        trace=trace,
    )
