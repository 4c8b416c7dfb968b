"""In-memory episodic or semantic store: postings and vectors in dictionaries, ranked by the core.

It offers both search capabilities (:mod:`prefrontal.stores.capabilities`):
lexical candidates from its :class:`~prefrontal.retrieval.postings.Postings`
and the cosine of the query's embedding with each live item's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np

from prefrontal.retrieval.embedder import Embedder
from prefrontal.retrieval.postings import Postings
from prefrontal.retrieval.ranking import LexicalMatches
from prefrontal.stores.capabilities import ranked_search
from prefrontal.stores.long_term import MemoryItem, MemoryQuery, ScoredMemory
from prefrontal.stores.memory_search import query_embedding, searchable_text, with_embeddings
from prefrontal.stores.records import utc_now
from prefrontal.stores.tenancy import Tenant, owns, preferred, visible_to

Key = tuple[str, str, str]
"""``(agent_id, user_id, item_id)``: ids are unique per agent and user."""
_NONE: Key = ("", "", "")


class InMemoryMemoryStore:
    """Items in a dictionary keyed by ``(agent_id, user_id, item_id)``, with postings.

    ``name`` ("episodic" or "semantic") is used in error messages only. With
    an ``embedder``, items without an embedding get one when put and queries
    without one get one when searched, as in every backend.
    """

    def __init__(self, name: str = "episodic", *, embedder: Embedder | None = None) -> None:
        self.name = name
        self.embedder = embedder
        self._items: dict[Key, MemoryItem] = {}
        self._owners: dict[tuple[str, str], set[str]] = {}
        """The users holding an item of each ``(agent_id, item_id)``."""
        self._index = Postings()
        self._keys: dict[str, Key] = {}
        """Each item's index id (:func:`_doc_id`) and its key."""
        self._units: dict[str, np.ndarray] = {}
        """Each embedded item's vector scaled to unit length, for cosine by dot product."""

    async def put(self, item: MemoryItem) -> None:
        await self.put_many([item])

    async def put_many(self, items: list[MemoryItem]) -> None:
        for item in await with_embeddings(items, self.embedder):
            self._store(item)

    def _store(self, item: MemoryItem) -> None:
        key = _key(item)
        existing = self._items.get(key)
        if existing is not None and existing.superseded_by and not item.superseded_by:
            item = item.model_copy(update={"superseded_by": existing.superseded_by})
        self._items[key] = item
        self._owners.setdefault((item.agent_id, item.item_id), set()).add(item.user_id)
        self._index.add(_doc_id(key), searchable_text(item))
        self._keys[_doc_id(key)] = key
        self._units.pop(_doc_id(key), None)
        if item.embedding:
            self._units[_doc_id(key)] = _unit(item.embedding)
        if item.supersedes:
            self._mark_superseded(item)

    def _mark_superseded(self, item: MemoryItem) -> None:
        old_key = (item.agent_id, item.user_id, item.supersedes or "")
        old = self._items.get(old_key)
        if old is not None and old.item_id != item.item_id:
            self._items[old_key] = old.model_copy(update={"superseded_by": item.item_id})

    async def get(self, tenant: Tenant, item_ids: list[str]) -> list[MemoryItem]:
        found = (self._visible(tenant, item_id) for item_id in item_ids)
        return [item for item in found if item is not None]

    def _visible(self, tenant: Tenant, item_id: str) -> MemoryItem | None:
        """The item of ``item_id`` that ``tenant`` is given (its own first), if any."""
        users = self._owners.get((tenant.agent_id, item_id), ())
        held = (self._items[(tenant.agent_id, user, item_id)] for user in users)
        return preferred(held, tenant)

    async def delete(self, tenant: Tenant, item_ids: list[str]) -> int:
        removed = 0
        for item_id in dict.fromkeys(item_ids):
            removed += self._remove((tenant.agent_id, tenant.user_id, item_id))
        return removed

    async def erase(self, tenant: Tenant) -> int:
        mine = [key for key, item in self._items.items() if owns(tenant, item)]
        return sum(self._remove(key) for key in mine)

    def _remove(self, key: Key) -> int:
        item = self._items.pop(key, None)
        if item is None:
            return 0
        users = self._owners[(key[0], key[2])]
        users.discard(key[1])
        if not users:
            del self._owners[(key[0], key[2])]
        self._index.remove(_doc_id(key))
        del self._keys[_doc_id(key)]
        self._units.pop(_doc_id(key), None)
        return 1

    def _live(self, tenant: Tenant, query: MemoryQuery) -> dict[str, MemoryItem]:
        return {
            _doc_id(key): item
            for key, item in self._items.items()
            if visible_to(item, tenant)
            and item.is_live(query.now)
            and (query.kinds is None or item.kind in query.kinds)
        }

    async def search(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]:
        embedding = await query_embedding(query, self.embedder)
        return await ranked_search(self, tenant, query, embedding)

    async def lexical_matches(
        self, tenant: Tenant, query: MemoryQuery, terms: Sequence[str]
    ) -> LexicalMatches:
        """The postings' candidates among the live items ``tenant`` may see."""
        return self._index.matches(terms, allowed=self._live(tenant, query))

    async def vector_matches(
        self, tenant: Tenant, query: MemoryQuery, embedding: Sequence[float]
    ) -> dict[str, float]:
        """Cosine of ``embedding`` with each live visible embedded item of its size."""
        live = self._live(tenant, query)
        docs = [d for d in live if d in self._units and len(self._units[d]) == len(embedding)]
        if not docs or not any(embedding):
            return {}
        values = np.stack([self._units[d] for d in docs]) @ _unit(tuple(embedding))
        return dict(zip(docs, values.tolist(), strict=True))

    async def items_by_key(self, tenant: Tenant, keys: Sequence[str]) -> Mapping[str, MemoryItem]:
        """The items of index ids ``keys`` (agent, item id, owner), by key."""
        found = ((key, self._items.get(self._keys.get(key, _NONE))) for key in keys)
        return {key: item for key, item in found if item is not None}

    async def around(
        self, tenant: Tenant, item_ids: list[str], *, radius: int, now: datetime | None = None
    ) -> list[MemoryItem]:
        anchors = [i for i in await self.get(tenant, item_ids) if i.thread_id is not None]
        wanted = {(a.thread_id, a.position) for a in anchors}
        asked = set(item_ids)
        now = now or utc_now()
        out = [
            item
            for item in self._items.values()
            if visible_to(item, tenant)
            and item.is_live(now)
            and item.item_id not in asked
            and item.position is not None
            and any(
                thread == item.thread_id and pos is not None and abs(pos - item.position) <= radius
                for thread, pos in wanted
            )
        ]
        out.sort(key=lambda i: (i.thread_id or "", i.position or 0, i.item_id))
        return out

    async def record_recall(self, tenant: Tenant, item_ids: list[str], at: datetime) -> None:
        for item in await self.get(tenant, item_ids):
            self._items[_key(item)] = item.model_copy(
                update={"recall_count": item.recall_count + 1, "last_recalled_at": at}
            )


def _unit(vector: tuple[float, ...]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


def _key(item: MemoryItem) -> Key:
    return (item.agent_id, item.user_id, item.item_id)


def _doc_id(key: Key) -> str:
    """The index's id of an item: agent, then item id, then owner, so that ties
    within one agent break by item id and owner, as in the durable backends."""
    return f"{key[0]}\x1f{key[2]}\x1f{key[1]}"
