"""Who may see what: the tenancy filter every store applies in every query.

An item belongs to one agent and, unless it is shared, to one user. A turn
runs for one ``(agent_id, user_id)`` pair and sees the agent's items that are
shared with all its users plus that user's private items, never another
agent's, never another user's private ones.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

Identifier = str


class Scope(StrEnum):
    """Visibility of an item within its agent."""

    PRIVATE = "private"
    """Seen only by turns of the owning user."""
    SHARED = "shared"
    """Seen by turns of every user of the owning agent."""


class Tenant(BaseModel):
    """The ``(agent, user)`` a store call is made for."""

    model_config = ConfigDict(frozen=True)

    agent_id: str = Field(min_length=1, max_length=256)
    user_id: str = Field(min_length=1, max_length=256)


class Owned(Protocol):
    """Anything stored with an owner: the fields tenancy looks at."""

    @property
    def agent_id(self) -> str: ...

    @property
    def user_id(self) -> str: ...

    @property
    def scope(self) -> Scope: ...


def visible_to(item: Owned, tenant: Tenant) -> bool:
    """True when ``tenant`` may see ``item`` (same agent; shared or own user)."""
    if item.agent_id != tenant.agent_id:
        return False
    return item.scope is Scope.SHARED or item.user_id == tenant.user_id
