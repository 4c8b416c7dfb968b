"""The conversation store: the turns of the conversation and its rolling summary.

Phase 4 reads the most recent turns and the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import Field

from prefrontal.enums import FastStrEnum
from prefrontal.stores.records import (
    Label,
    Lines,
    Metadata,
    NonEmptyId,
    OwnedRecord,
    Record,
    Timestamp,
    utc_now,
)
from prefrontal.stores.tenancy import Scope, Tenant

MAX_CONTENT_CHARS = 1_000_000


class Role(FastStrEnum):
    """Who spoke."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class ConversationTurn(OwnedRecord):
    """One message of the conversation. ``item_id`` is the message id."""

    session_id: NonEmptyId
    role: Role
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    speaker: Label | None = None
    metadata: Metadata = Field(default_factory=dict)


class ConversationSummary(Record):
    """A rolling summary of a user's conversation with the agent."""

    agent_id: NonEmptyId
    user_id: NonEmptyId
    scope: Scope = Scope.PRIVATE
    text: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    topics: Lines = ()
    decisions: Lines = ()
    updated_at: Timestamp = Field(default_factory=utc_now)
    through: str | None = None
    """The id of the newest message folded into the summary (``None``: not kept)."""


@runtime_checkable
class ConversationStore(Protocol):
    """Holds conversation turns and one rolling summary per (agent, user).

    Contract: ``recent`` returns at most ``limit`` turns visible to ``tenant``
    (restricted to ``session_id`` when given), the newest ones, in
    chronological order (oldest first; ties broken by insertion order).
    ``append`` of an existing ``item_id`` of the same agent and user replaces
    that turn (ids are unique per agent and user). ``erase`` removes the
    tenant's turns and its summary and returns how many records it removed.
    ``delete`` removes the tenant's own messages of the ids given (never
    another user's, shared or not) and returns them; ``drop_summary``
    removes the tenant's rolling summary and says whether there was one.
    """

    async def append(self, turn: ConversationTurn) -> None:
        """Add a turn (or replace the turn with the same id)."""
        ...

    async def recent(
        self, tenant: Tenant, *, limit: int, session_id: str | None = None
    ) -> list[ConversationTurn]:
        """The newest ``limit`` turns, oldest first."""
        ...

    async def get_summary(self, tenant: Tenant) -> ConversationSummary | None:
        """The rolling summary of ``tenant``'s conversation, if any."""
        ...

    async def put_summary(self, summary: ConversationSummary) -> None:
        """Create or replace the rolling summary."""
        ...

    async def delete(self, tenant: Tenant, item_ids: Sequence[str]) -> list[ConversationTurn]:
        """Remove the tenant's own messages of ``item_ids``; the messages removed."""
        ...

    async def drop_summary(self, tenant: Tenant) -> bool:
        """Remove the tenant's rolling summary; ``True`` if there was one."""
        ...

    async def erase(self, tenant: Tenant) -> int:
        """Remove the tenant's turns and summary; how many records were removed."""
        ...
