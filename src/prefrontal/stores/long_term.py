"""Long-term memory stores: episodic (what happened) and semantic (what is known).

Both kinds share one item model and one Protocol; they are separate stores
so that they can live in separate backends and be searched concurrently.

Lifecycle rules every backend honours:

- an item whose ``valid_until`` has passed is never returned by ``search``;
- putting an item with ``supersedes=X`` marks item ``X`` as superseded by it,
  and ``search`` returns only the live (unsuperseded) version;
- items may belong to a ``thread_id`` (a conversation session, a document)
  at a ``position``; ``around`` returns their neighbours in the thread.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import Field

from prefrontal.stores.records import (
    Labels,
    Metadata,
    NonEmptyId,
    OwnedRecord,
    Record,
    Timestamp,
    Vector,
    utc_now,
)
from prefrontal.stores.tenancy import Tenant

MAX_MEMORY_CHARS = 200_000
"""Longer content is refused: a memory item is a unit of recall, not a document."""
AUTHOR_KEY = "author"
"""The metadata key that names who wrote a memory (the key or user that stored it); set by
:class:`~prefrontal.memory.api.MemoryAPI`, never taken from the caller's metadata."""
SOURCE_KEY = "source"
"""The metadata key that names what a memory came from (``user``, a tool, ``end_turn``)."""


class MemoryKind(StrEnum):
    """What a memory item records."""

    EVENT = "event"
    OBSERVATION = "observation"
    TOOL_RESULT = "tool_result"
    FACT = "fact"
    SKILL = "skill"
    PATTERN = "pattern"
    SUMMARY = "summary"


class MemoryItem(OwnedRecord):
    """One unit of long-term memory."""

    kind: MemoryKind = MemoryKind.EVENT
    content: str = Field(min_length=1, max_length=MAX_MEMORY_CHARS)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    occurred_at: Timestamp | None = None
    """When the remembered thing happened (``created_at`` is when it was stored)."""
    updated_at: Timestamp | None = None
    """When it was last changed (:meth:`~prefrontal.memory.api.MemoryAPI.update`); ``None``
    while it is as first stored."""
    recall_count: int = Field(default=0, ge=0)
    last_recalled_at: Timestamp | None = None
    valid_until: Timestamp | None = None
    supersedes: NonEmptyId | None = None
    superseded_by: NonEmptyId | None = None
    thread_id: NonEmptyId | None = None
    position: int | None = None
    tags: Labels = ()
    entities: Labels = ()
    metadata: Metadata = Field(default_factory=dict)
    embedding: Vector | None = Field(default=None, repr=False)

    def is_live(self, now: datetime) -> bool:
        """Not expired and not superseded at ``now``."""
        if self.superseded_by is not None:
            return False
        return self.valid_until is None or self.valid_until > now


class MemoryQuery(Record):
    """A search over a memory store.

    ``text`` is free user text: backends must treat it as words, never as query
    syntax. ``embedding`` enables vector similarity where the backend has it.
    """

    text: str = Field(default="", max_length=MAX_MEMORY_CHARS)
    limit: int = Field(default=20, ge=1, le=1_000)
    kinds: tuple[MemoryKind, ...] | None = None
    embedding: Vector | None = Field(default=None, repr=False)
    now: Timestamp = Field(default_factory=utc_now)


class ScoredMemory(Record):
    """A search hit: the item, its fused score and the signals behind it."""

    item: MemoryItem
    score: float
    signals: dict[str, float] = Field(default_factory=dict)


@runtime_checkable
class MemoryStore(Protocol):
    """An episodic or semantic memory store.

    Contract:

    - every call returns only items visible to ``tenant``;
    - ids are unique per ``(agent_id, user_id)``: ``put`` creates or replaces
      the item with its agent, user and ``item_id``, never another user's
      item of the same id; with ``supersedes`` set it also marks that item
      (of the same agent and user) superseded;
    - ``search`` returns live items only, best first, at most ``query.limit``,
      each with a positive ``score`` and its named ``signals`` (``"bm25"`` for
      the lexical match, ``"vector"`` for embedding similarity); an empty or
      all-punctuation ``text`` matches nothing. A backend need not rank:
      :func:`~prefrontal.stores.capabilities.ranked_search` ranks the
      candidates its search capabilities find, as the core ranks every
      backend's;
    - ``get`` returns the requested items that exist and are visible, in the
      order asked, live or not, one per id: where the tenant's own item and
      items other users shared carry one id, the tenant's own, else the
      shared one whose owner's user id sorts first
      (:func:`~prefrontal.stores.tenancy.precedence`);
    - ``around`` returns, for each given item with a thread, the items of the
      same thread within ``radius`` positions that are live now (the given
      items themselves excluded), ordered by thread, position and id;
    - ``record_recall`` increments ``recall_count`` and sets ``last_recalled_at``
      of the items ``get`` would return;
    - ``delete`` removes the tenant's own items (private or shared by it) of
      the given ids, never another user's, and returns how many it removed;
      they leave the search statistics as if never put;
    - ``erase`` removes every item the tenant owns and returns how many.
    """

    async def put(self, item: MemoryItem) -> None:
        """Create or replace an item."""
        ...

    async def put_many(self, items: list[MemoryItem]) -> None:
        """Create or replace many items in one transaction where the backend has them."""
        ...

    async def get(self, tenant: Tenant, item_ids: list[str]) -> list[MemoryItem]:
        """The visible items among ``item_ids``, in that order."""
        ...

    async def search(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]:
        """Live visible items that match ``query``, best first."""
        ...

    async def around(
        self, tenant: Tenant, item_ids: list[str], *, radius: int, now: datetime | None = None
    ) -> list[MemoryItem]:
        """Thread neighbours of ``item_ids`` within ``radius`` positions, live at ``now``.

        ``now`` defaults to the current time; a turn passes its own clock's,
        as it does to :meth:`search`, so a replayed turn sees the same items.
        """
        ...

    async def record_recall(self, tenant: Tenant, item_ids: list[str], at: datetime) -> None:
        """Note that these items were put into a turn's context at ``at``."""
        ...

    async def delete(self, tenant: Tenant, item_ids: list[str]) -> int:
        """Remove the tenant's own items among ``item_ids``; how many were removed."""
        ...

    async def erase(self, tenant: Tenant) -> int:
        """Remove every item ``tenant`` owns; how many were removed."""
        ...
