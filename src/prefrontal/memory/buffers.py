"""Copies in working memory: what leaves the saved session buffers when records go.

A session's buffer holds copies of what it showed: the turn's exchange
(``exchange:<turn>``, standing for ``<turn>:user`` and ``<turn>:reply``),
memories retrieved into it, the agent's notes and tool results, and, under
SUMMARIZE, summaries that folded some of those. When a message or memory is
forgotten, or a user erased, no copy of it may stay there:

- :func:`forget_in_buffers`: in the tenant's own sessions, every item that
  is the forgotten id or names it (its provenance or the items a summary
  folded) goes; when the forgotten memory was shared, the retrieved copies
  and summaries naming it in every other session of the agent go too;
- :func:`drop_dangling_copies`: after an erase, every other session of the
  agent loses the retrieved copies whose memory its user can no longer read
  (the erased user's shared memories among them). It visits each saved
  session of the agent that holds a retrieved copy: its cost grows with the
  agent's sessions, not with the erased user's data.

An item removed this way is removed as on request (a ``removed`` event).
The session keeps the time it was last saved at, so that a forget or erase
does not make it look recently used.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from functools import partial

from pydantic_core import to_json

from prefrontal.buffer import BufferItem, ItemSource, SessionBuffer
from prefrontal.stores.long_term import MemoryStore
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, WorkingMemoryStore

LONG_TERM = ("episodic", "semantic")
RETRIEVED = ItemSource.MEMORY_RETRIEVAL.value
"""What a retrieved copy's saved JSON holds (a session without it holds none)."""


def marks(item_ids: Iterable[str]) -> list[str]:
    """The ids as they show in a saved state's JSON: quoted (in a buffer document a database
    keeps in a column of its own), and quoted again where the document is a JSON string
    inside the state (the in-memory store's JSON, rows saved before the column)."""
    quoted = [to_json(item_id).decode() for item_id in item_ids]
    return [*quoted, *(to_json(text).decode()[1:-1] for text in quoted)]


def names(item: BufferItem, item_ids: Collection[str]) -> bool:
    """``item`` is one of ``item_ids``, stands for one, or is a summary that folded one."""
    return (
        item.item_id in item_ids
        or any(i in item_ids for i in item.provenance.item_ids)
        or any(i in item_ids for i in item.summary_of)
    )


def copies(item: BufferItem, item_ids: Collection[str]) -> bool:
    """``item`` is a retrieved copy of one of ``item_ids``, or a summary that folded one."""
    if item.is_summary:
        return names(item, item_ids)
    return item.source is ItemSource.MEMORY_RETRIEVAL and names(item, item_ids)


async def forget_in_buffers(
    store: WorkingMemoryStore, tenant: Tenant, item_ids: Collection[str], *, everyone: bool
) -> int:
    """Remove what stands for ``item_ids`` from ``tenant``'s sessions (all the agent's when
    ``everyone``: a shared memory); how many buffer items were removed."""
    wanted = frozenset(item_ids)
    found = marks(wanted)
    own = await store.sessions(tenant.agent_id, user_id=tenant.user_id, containing=found)
    removed = await _drop(store, own, lambda item: names(item, wanted))
    if everyone:
        others = await store.sessions(tenant.agent_id, containing=found)
        removed += await _drop(
            store,
            [key for key in others if key.user_id != tenant.user_id],
            lambda item: copies(item, wanted),
        )
    return removed


async def drop_dangling_copies(stores: Stores, erased: Tenant) -> int:
    """After ``erased`` was erased: remove from the agent's other sessions the retrieved
    copies of memories their users can no longer read; how many were removed."""
    removed = 0
    keys = await stores.working_memory.sessions(erased.agent_id, containing=marks([RETRIEVED]))
    for key in keys:
        if key.user_id == erased.user_id:
            continue
        session = await SessionBuffer.load(stores.working_memory, key)
        gone = await _gone(stores, key.tenant, session.items)
        removed += await _remove(session, partial(_copy_of, gone))
    return removed


async def _gone(stores: Stores, tenant: Tenant, items: Iterable[BufferItem]) -> frozenset[str]:
    """Ids of the memories ``items`` hold retrieved copies of that ``tenant`` cannot read."""
    gone: set[str] = set()
    for name in LONG_TERM:
        wanted = {
            item_id
            for item in items
            if item.source is ItemSource.MEMORY_RETRIEVAL and item.provenance.store == name
            for item_id in item.provenance.item_ids
        }
        if wanted:
            store: MemoryStore = getattr(stores, name)
            found = {item.item_id for item in await store.get(tenant, sorted(wanted))}
            gone |= wanted - found
    return frozenset(gone)


def _copy_of(item_ids: frozenset[str], item: BufferItem) -> bool:
    return copies(item, item_ids)


async def _drop(
    store: WorkingMemoryStore, keys: Iterable[SessionKey], chosen: Callable[[BufferItem], bool]
) -> int:
    removed = 0
    for key in keys:
        removed += await _remove(await SessionBuffer.load(store, key), chosen)
    return removed


async def _remove(session: SessionBuffer, chosen: Callable[[BufferItem], bool]) -> int:
    """Remove the items ``chosen`` picks and save the session (only when some went)."""
    doomed = [item.item_id for item in session.items if chosen(item)]
    for item_id in doomed:
        await session.remove(item_id)
    if doomed:
        state = session.state
        await session.save(state.updated_at if state is not None else None)
    return len(doomed)
