"""The keeper that promotes a leaving buffer note into episodic memory.

:func:`episodic_keeper` gives a session's buffer its
:class:`~prefrontal.buffer.promotion.Keeper`: before the buffer's policy
lets an item it alone holds go (evicted, faded, folded, dropped to fit
smaller bounds), each such item is written to the episodic store as one
item of its own, with the same provenance consolidation gives
(:func:`~prefrontal.formation.planning.promoted_item`:
``metadata["consolidated_from"]`` names the buffer item) and its full
content, under the id :func:`~prefrontal.formation.planning.promoted_id`
derives from the session and the item's id. Writing it again (a retried
save replays the turn) replaces it, never duplicates it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from prefrontal.buffer import BufferItem, SessionBuffer
from prefrontal.buffer.promotion import Keeper
from prefrontal.formation.planning import Group, promoted_id, promoted_item
from prefrontal.stores.long_term import MAX_MEMORY_CHARS, MemoryItem, MemoryStore
from prefrontal.stores.set import Stores
from prefrontal.stores.working_memory import SessionKey

LEFT_BY: Final = "left_buffer"
"""``metadata["promoted_by"]`` of an item promoted as it left the buffer."""


class EpisodicKeeper:
    """Writes leaving buffer items of one session to its episodic store (see the module)."""

    def __init__(self, store: MemoryStore, key: SessionKey) -> None:
        self.store = store
        self.key = key

    def memory_of(self, item: BufferItem, at: datetime) -> MemoryItem:
        """The episodic item ``item`` becomes when it leaves the buffer at ``at``.

        Its content is the item's own, whole (a buffer item longer than a
        memory item may be, 200,000 characters, keeps its beginning).
        """
        key = self.key
        group = Group(target=promoted_id(key, (item.item_id,)), source=item.source, members=(item,))
        memory = promoted_item(key, group, item.content[:MAX_MEMORY_CHARS], at)
        return memory.model_copy(update={"metadata": {**memory.metadata, "promoted_by": LEFT_BY}})

    async def __call__(self, items: Sequence[BufferItem], at: datetime) -> Mapping[str, str]:
        """Write ``items`` in one call of the store; each one's episodic id, by item id."""
        memories = [self.memory_of(item, at) for item in items]
        await self.store.put_many(memories)
        return {item.item_id: m.item_id for item, m in zip(items, memories, strict=True)}


def episodic_keeper(store: MemoryStore, key: SessionKey) -> Keeper:
    """The keeper of session ``key``: leaving notes become items of ``store`` (episodic)."""
    return EpisodicKeeper(store, key)


async def open_session(stores: Stores, key: SessionKey, **options: Any) -> SessionBuffer:
    """Session ``key``'s buffer, loaded from ``stores`` with its episodic keeper.

    The way to add notes to a session from outside a turn: what the buffer
    lets go is promoted into ``stores.episodic`` first. ``options`` are
    :meth:`SessionBuffer.load`'s (``config``, ``clock``, ``count_tokens``...).
    """
    keeper = episodic_keeper(stores.episodic, key)
    return await SessionBuffer.load(stores.working_memory, key, keeper=keeper, **options)
