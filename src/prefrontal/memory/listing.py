"""A tenant's memories page by page, and one memory's history of versions.

What :meth:`~prefrontal.memory.api.MemoryAPI.list` and
:meth:`~prefrontal.memory.api.MemoryAPI.history` return, over the two
capabilities of :mod:`prefrontal.stores.memory_pages`.

**Paging.** The episodic and semantic stores are listed as one sequence,
ordered by ``(item_id, owner, store)`` descending: newest id first. A page
asks each store for the items below the cursor (a keyset read), merges them
and stops at ``limit``; its :attr:`MemoryPage.next_cursor` names the last
item's position (:func:`encode_cursor` says how it is written): pass it back as it
came. It holds the position only, never a right: every page is read with the
visibility rules of the tenant asking.

**History.** The versions of the item :meth:`~prefrontal.memory.api.MemoryAPI.get`
returns, oldest first and the current one last, each with who wrote it
(``metadata["author"]``), when (``updated_at``, or ``created_at`` for the
first) and which fields differ from the version before. A reader sees the
versions of another user's shared memory that were shared, never one that
was private then.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from pydantic import Field

from prefrontal.errors import ConfigurationError
from prefrontal.memory.recall import STORE_NAMES, MemoryStoreName
from prefrontal.stores.long_term import AUTHOR_KEY, MemoryItem, MemoryKind, MemoryStore
from prefrontal.stores.memory_pages import (
    MAX_PAGE,
    KeepsVersions,
    ListsMemories,
    Position,
    visible_versions,
)
from prefrontal.stores.records import Record
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Scope, Tenant

COMPARED = ("content", "importance", "scope", "kind", "tags", "entities", "valid_until")
"""The fields a version's ``changed`` names when they differ from the version before
(``author`` too, from the metadata)."""


class ListedMemory(Record):
    """One memory of a page, with the store that holds it."""

    store: MemoryStoreName
    item: MemoryItem


class MemoryPage(Record):
    """A page of memories, newest first, and the cursor of the next page (``None``: the last)."""

    memories: tuple[ListedMemory, ...]
    next_cursor: str | None = None


class MemoryVersion(Record):
    """One version of a memory: what it said, who wrote it, when, and what changed."""

    version: int = Field(ge=1)
    """1 for the first version."""
    store: MemoryStoreName
    content: str
    importance: float
    scope: Scope
    kind: MemoryKind
    tags: tuple[str, ...]
    author: str | None
    at: datetime
    """When this version was written: ``updated_at``, else ``created_at``."""
    changed: tuple[str, ...]
    """The fields of :data:`COMPARED` (and ``author``) that differ from the version before;
    empty for the first."""
    current: bool


CURSOR_PATTERN = r"^[es](?:[0-9a-f]{2})*\.(?:[0-9a-f]{2})*$"
"""What a cursor looks like: the store's initial, then the item id and the owner's user id,
each as the hexadecimal of its UTF-8, joined by a dot."""
_CURSOR = re.compile(CURSOR_PATTERN)


def encode_cursor(position: Position, store: MemoryStoreName) -> str:
    """The cursor of a page that stops at ``position`` in ``store``."""
    item_id, user_id = position
    return f"{store[0]}{item_id.encode().hex()}.{user_id.encode().hex()}"


def decode_cursor(cursor: str) -> tuple[Position, MemoryStoreName]:
    """The position and store in ``cursor``; ``ValueError`` when it does not look like one.

    Any cursor of the right form names a position, even one no page returned:
    a position is only a place in the order (pages continue below it), and
    carries no right. Bytes that are not UTF-8, and NUL, read as U+FFFD.
    """
    if not _CURSOR.match(cursor):
        raise ValueError("cursor is not one a page of memories returned")
    head, _, owner = cursor[1:].partition(".")
    item_id, user_id = (_text(part) for part in (head, owner))
    store: MemoryStoreName = "episodic" if cursor[0] == "e" else "semantic"
    return (item_id, user_id), store


def _text(hexadecimal: str) -> str:
    return bytes.fromhex(hexadecimal).decode("utf-8", "replace").replace("\x00", "\ufffd")


def _lister(stores: Stores, name: MemoryStoreName) -> ListsMemories:
    store: MemoryStore = getattr(stores, name)
    if not isinstance(store, ListsMemories):
        raise ConfigurationError(f"the {name} store cannot list memories")
    return store


def _keeper(stores: Stores, name: MemoryStoreName) -> KeepsVersions:
    store: MemoryStore = getattr(stores, name)
    if not isinstance(store, KeepsVersions):
        raise ConfigurationError(f"the {name} store keeps no versions")
    return store


async def memory_page(
    stores: Stores,
    tenant: Tenant,
    *,
    limit: int,
    after: str | None,
    kinds: Sequence[MemoryKind] | None,
    store: MemoryStoreName | None,
    scope: Scope | None,
) -> MemoryPage:
    """The page of ``tenant``'s visible memories after the cursor ``after``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be 1 to {MAX_PAGE}, an integer, got {limit!r}")
    if store is not None and store not in STORE_NAMES:
        raise ValueError(f"store must be one of {sorted(STORE_NAMES)}, got {store!r}")
    cursor = None if after is None else decode_cursor(after)
    rows: list[tuple[tuple[str, str, str], ListedMemory]] = []
    for name in STORE_NAMES:
        if store is not None and name != store:
            continue
        below, inclusive = None, False
        if cursor is not None:
            below, inclusive = cursor[0], name < cursor[1]
        items = await _lister(stores, name).listed(
            tenant, limit=limit + 1, below=below, inclusive=inclusive, kinds=kinds, scope=scope
        )
        rows += [((i.item_id, i.user_id, name), ListedMemory(store=name, item=i)) for i in items]
    rows.sort(key=lambda row: row[0], reverse=True)
    page = rows[:limit]
    next_cursor = None
    if len(rows) > limit:
        last = page[-1][1]
        next_cursor = encode_cursor((last.item.item_id, last.item.user_id), last.store)
    return MemoryPage(memories=tuple(row[1] for row in page), next_cursor=next_cursor)


async def memory_history(
    stores: Stores, tenant: Tenant, found: MemoryItem, store: MemoryStoreName
) -> list[MemoryVersion]:
    """The versions of ``found`` (the item ``get`` gave ``tenant``, held in ``store``)."""
    owner = Tenant(agent_id=found.agent_id, user_id=found.user_id)
    earlier = await _keeper(stores, store).versions(owner, found.item_id)
    chain = [*visible_versions(tenant, earlier), found]
    versions: list[MemoryVersion] = []
    for number, item in enumerate(chain, start=1):
        before = chain[number - 2] if number > 1 else None
        versions.append(
            MemoryVersion(
                version=number,
                store=store,
                content=item.content,
                importance=item.importance,
                scope=item.scope,
                kind=item.kind,
                tags=item.tags,
                author=_author(item),
                at=item.updated_at or item.created_at,
                changed=() if before is None else _changes(before, item),
                current=item is found,
            )
        )
    return versions


def _author(item: MemoryItem) -> str | None:
    author = item.metadata.get(AUTHOR_KEY)
    return author if isinstance(author, str) else None


def _changes(before: MemoryItem, after: MemoryItem) -> tuple[str, ...]:
    named = tuple(f for f in COMPARED if getattr(before, f) != getattr(after, f))
    return (*named, "author") if _author(before) != _author(after) else named
