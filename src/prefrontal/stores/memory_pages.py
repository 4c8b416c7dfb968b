"""Listing a tenant's memories page by page, and the earlier versions of one memory.

Two capabilities every bundled memory backend offers (in memory, SQLite,
PostgreSQL), which :meth:`~prefrontal.memory.api.MemoryAPI.list` and
:meth:`~prefrontal.memory.api.MemoryAPI.history` use:

- :class:`ListsMemories`: the items a tenant may see (its own, private or
  shared, and the agent's shared ones), newest id first, in keyset pages: a
  page continues strictly after a :data:`Position` ``(item_id, user_id)``,
  read from an index on the agent and id, never by skipping an offset;
- :class:`KeepsVersions`: each time a put replaces an item with one that
  differs in anything but the fields of :data:`IN_PLACE`, the replaced
  version is kept; :meth:`KeepsVersions.versions` returns them oldest first. Deleting
  or erasing the item deletes its versions with it, in the same transaction.

The order is by item id, then owner: ids made by
:func:`~prefrontal.memory.api.new_ulid` sort by creation time, so the
newest memory comes first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.tenancy import Scope, Tenant

Position = tuple[str, str]
"""``(item_id, user_id)``: where a page of a store's items stops; the next one starts below it."""

MAX_PAGE = 1_000
"""The most items one page returns."""


@runtime_checkable
class ListsMemories(Protocol):
    """Capability: the items a tenant may see, newest id first, a keyset page at a time."""

    async def listed(
        self,
        tenant: Tenant,
        *,
        limit: int,
        below: Position | None = None,
        inclusive: bool = False,
        kinds: Sequence[MemoryKind] | None = None,
        scope: Scope | None = None,
    ) -> list[MemoryItem]:
        """At most ``limit`` items visible to ``tenant``, by ``(item_id, user_id)`` descending.

        Only those below ``below`` (or equal to it too, when ``inclusive``), of
        ``kinds`` and of ``scope`` when given; live or not (superseded and
        expired items are listed: a list shows what is held).
        """
        ...


@runtime_checkable
class KeepsVersions(Protocol):
    """Capability: the versions of an item that later puts replaced."""

    async def versions(self, owner: Tenant, item_id: str) -> list[MemoryItem]:
        """The replaced versions of ``owner``'s item ``item_id``, oldest first (not the current).

        ``owner`` is the item's agent and user exactly: the caller decides
        whether a reader may see them (:func:`visible_versions`).
        """
        ...


IN_PLACE = frozenset({"superseded_by", "recall_count", "last_recalled_at", "embedding"})
"""Fields that change in place: a put that differs from the held item only in these makes
no version (recall counts, supersession, an embedding computed anew)."""


def changed(before: MemoryItem, after: MemoryItem) -> bool:
    """Whether a put of ``after`` over ``before`` makes a new version of the item."""
    return before.model_dump(exclude=set(IN_PLACE)) != after.model_dump(exclude=set(IN_PLACE))


def visible_versions(reader: Tenant, versions: Sequence[MemoryItem]) -> list[MemoryItem]:
    """The versions ``reader`` may see: all of its own item, only the shared ones of another's."""
    return [
        version
        for version in versions
        if version.user_id == reader.user_id or version.scope is Scope.SHARED
    ]
