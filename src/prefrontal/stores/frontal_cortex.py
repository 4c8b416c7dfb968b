"""The frontal-cortex store: goals, pending actions, open questions and stories.

Phase 3 reads it: active goals, pending actions, questions and stories, and
what changed since the last turn (progress deltas).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from pydantic import Field

from prefrontal.enums import FastStrEnum
from prefrontal.stores.records import Label, Labels, OwnedRecord, Record, Timestamp, utc_now
from prefrontal.stores.tenancy import Tenant


class FrontalKind(FastStrEnum):
    """What a frontal-cortex item is."""

    GOAL = "goal"
    ACTION = "action"
    QUESTION = "question"
    STORY = "story"


class FrontalStatus(FastStrEnum):
    """Where an item stands."""

    ACTIVE = "active"
    BLOCKED = "blocked"
    DONE = "done"
    CANCELLED = "cancelled"


class Owner(FastStrEnum):
    """Who is expected to act on an item."""

    AGENT = "agent"
    USER = "user"


class FrontalItem(OwnedRecord):
    """A goal, a pending action, an open question or a story."""

    kind: FrontalKind
    title: str = Field(min_length=1, max_length=2_000)
    detail: str = Field(default="", max_length=20_000)
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    progress: float = Field(default=0.0, ge=0.0, le=1.0)
    """How far along the item is (a goal's 0.4 is 40 % done)."""
    status: FrontalStatus = FrontalStatus.ACTIVE
    owner: Owner = Owner.AGENT
    blocking: bool = False
    due_at: Timestamp | None = None
    tags: Labels = ()
    author: Label | None = None
    """Who wrote it last: a key's name or a reserved author (:mod:`prefrontal.stores.authors`);
    ``None`` for the application's own writes in process."""
    updated_at: Timestamp = Field(default_factory=utc_now)
    version: int = Field(default=1, ge=1)
    """Bumped by every versioned save (:mod:`prefrontal.stores.versioned`)."""


class FrontalQuery(Record):
    """Which frontal-cortex items to return.

    Items are returned newest ``updated_at`` first; ``None`` means no filter.
    """

    kinds: tuple[FrontalKind, ...] | None = None
    statuses: tuple[FrontalStatus, ...] | None = None
    updated_since: datetime | None = None
    limit: int = Field(default=50, ge=1, le=1_000)


@runtime_checkable
class FrontalCortexStore(Protocol):
    """Holds goals, actions, questions and stories.

    Contract: ``query`` returns only items visible to ``tenant`` that match
    every filter of ``query``, at most ``query.limit`` of them, most recently
    updated first. ``put`` creates or replaces the item with the same
    ``item_id`` for the same agent and user (ids are unique per agent and
    user). ``erase`` removes every item the tenant owns (private or shared by
    it) and returns how many.
    """

    async def put(self, item: FrontalItem) -> None:
        """Create or replace an item."""
        ...

    async def query(self, tenant: Tenant, query: FrontalQuery) -> list[FrontalItem]:
        """Items visible to ``tenant`` that match ``query``."""
        ...

    async def erase(self, tenant: Tenant) -> int:
        """Remove every item ``tenant`` owns; how many were removed."""
        ...
