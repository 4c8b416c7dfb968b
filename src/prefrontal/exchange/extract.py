"""The optional ``Extractor`` hook: semantic items (facts, preferences) from an exchange.

An extractor is any async callable that reads an :class:`ExchangeView` and
returns :class:`~prefrontal.exchange.models.Extracted` items. prefrontal
ships none that pretends to understand language: plug in one that asks a
model, or rules of your own. :func:`extract` writes what it returns into the
semantic store with provenance to the turn (the item id starts with the
turn id; metadata ``turn_id`` and ``parent_turn_id``), and an item with a
``key`` supersedes the live earlier item with the same key.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from pydantic import ConfigDict

from prefrontal.exchange.models import Extracted, ToolCall
from prefrontal.model_reads import FastReads
from prefrontal.stores.long_term import MemoryItem, MemoryQuery, MemoryStore
from prefrontal.stores.records import MetadataValue
from prefrontal.stores.tenancy import Tenant

KEY_TAG = "fact-key:"
"""Tag prefix under which an item's key is indexed, so its next version can find it."""


class ExchangeView(FastReads):
    """What an extractor reads: one ended turn."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn_id: str
    parent_turn_id: str | None
    agent_id: str
    user_id: str
    session_id: str
    user_input: str
    reply: str
    tool_calls: tuple[ToolCall, ...] = ()
    at: datetime

    @property
    def tenant(self) -> Tenant:
        """The ``(agent, user)`` the exchange belongs to."""
        return Tenant(agent_id=self.agent_id, user_id=self.user_id)


class Extractor(Protocol):
    """Turns an exchange into semantic items.

    Contract: return the items found (none is fine); it may be slow (it runs
    off the caller's path, bounded by ``extract_timeout_s``); what it raises
    is recorded in the turn's trace, never lost.
    """

    async def __call__(self, exchange: ExchangeView) -> Sequence[Extracted]: ...


def item(view: ExchangeView, found: Extracted, number: int) -> MemoryItem:
    """An extracted item as a semantic memory with provenance to its turn."""
    metadata: dict[str, MetadataValue] = {"turn_id": view.turn_id, "source": "end_turn"}
    if view.parent_turn_id is not None:
        metadata["parent_turn_id"] = view.parent_turn_id
    tags = found.tags
    if found.key is not None:
        metadata["key"] = found.key
        tags = (*tags, KEY_TAG + found.key)
    return MemoryItem(
        item_id=f"{view.turn_id}:fact:{number}",
        agent_id=view.agent_id,
        user_id=view.user_id,
        kind=found.kind,
        content=found.content,
        importance=found.importance,
        occurred_at=view.at,
        created_at=view.at,
        tags=tags,
        metadata=metadata,
    )


async def earlier_version(
    store: MemoryStore, tenant: Tenant, new: MemoryItem, now: datetime
) -> str | None:
    """The id of the newest live item with ``new``'s key, if any."""
    key = new.metadata.get("key")
    if not isinstance(key, str):
        return None
    hits = await store.search(tenant, MemoryQuery(text=f"{KEY_TAG}{key}", limit=50, now=now))
    same = [
        h.item for h in hits if h.item.metadata.get("key") == key and h.item.item_id != new.item_id
    ]
    same.sort(key=lambda i: i.created_at)
    return same[-1].item_id if same else None


async def extract(store: MemoryStore, view: ExchangeView, extractor: Extractor) -> list[MemoryItem]:
    """Run ``extractor`` on ``view`` and write what it found; returns the items written."""
    found = await extractor(view)
    items: list[MemoryItem] = []
    for number, each in enumerate(found):
        new = item(view, each, number)
        previous = await earlier_version(store, view.tenant, new, view.at)
        items.append(new.model_copy(update={"supersedes": previous}) if previous else new)
    if items:
        await store.put_many(items)
    return items
