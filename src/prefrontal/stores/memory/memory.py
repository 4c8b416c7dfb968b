"""In-memory episodic or semantic store: items in a dictionary, searched in numpy arrays.

Each agent's items are indexed by an
:class:`~prefrontal.stores.memory.agent_index.AgentIndex`: term postings and
unit vectors in segments by who may see them, BM25 statistics per agent.
:meth:`InMemoryMemoryStore.search` scores, fuses and ranks there in arrays,
as :func:`~prefrontal.stores.capabilities.ranked_search` ranks the
candidates of the two search capabilities
(:mod:`prefrontal.stores.capabilities`), which the store offers too.

**Each vector once.** An item's embedding is held by the index only, in
float64 arrays (:class:`~prefrontal.stores.memory.segment.VectorColumn`),
not again as a tuple of Python floats (four times the bytes): the
dictionary keeps each embedded item without it, and an item leaving the
store (:meth:`~InMemoryMemoryStore.get`, search hits, ``around``,
:meth:`~InMemoryMemoryStore.items_by_key`) gets it back, the very floats
it was put with: an item read back equals the item written. A deleted,
replaced or erased item's vector is zeroed in the index's arrays at once.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import repeat

import numpy as np

from prefrontal.retrieval.embedder import Embedder
from prefrontal.retrieval.ranking import Corpus, LexicalMatches, query_terms
from prefrontal.stores.long_term import MemoryItem, MemoryKind, MemoryQuery, ScoredMemory
from prefrontal.stores.memory.agent_index import AgentIndex
from prefrontal.stores.memory.vectors import microseconds, unit
from prefrontal.stores.memory_pages import Position, changed
from prefrontal.stores.memory_search import query_embedding, searchable_text, with_embeddings
from prefrontal.stores.records import utc_now
from prefrontal.stores.tenancy import Scope, Tenant, owns, preferred, visible_to
from prefrontal.trusted import assemble, evolve

Key = tuple[str, str, str]
"""``(agent_id, user_id, item_id)``: ids are unique per agent and user."""
_NONE: Key = ("", "", "")
BATCH = 1_024
"""Items embedded at a time by :meth:`InMemoryMemoryStore.put_many`."""


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
        self._indexes: dict[str, AgentIndex] = {}
        """Each agent's postings and vectors: its statistics are its own (``retrieval.ranking``)."""
        self._keys: dict[str, Key] = {}
        """Each item's index id (:func:`_doc_id`) and its key."""
        self._threads: dict[tuple[str, str], dict[int, set[Key]]] = {}
        """The items of each ``(agent_id, thread_id)``, by position: ``around`` without a scan."""
        self._versions: dict[Key, list[MemoryItem]] = {}
        """Each item's replaced versions, oldest first (:mod:`prefrontal.stores.memory_pages`)."""
        self._ordered: dict[str, list[Position]] = {}
        """Each agent's ``(item_id, user_id)`` keys, ascending, for :meth:`listed`: made when
        first listed, dropped by a write that adds or removes an item of the agent."""
        self._embedded: set[Key] = set()
        """The keys of the items held with an embedding in the index: any other item leaves
        the store as it is held, with no look into the index."""

    async def put(self, item: MemoryItem) -> None:
        await self.put_many([item])

    async def put_many(self, items: list[MemoryItem]) -> None:
        """Store ``items``; none when embedding any of them fails.

        Embeddings are made :data:`BATCH` items at a time and each held as a
        float64 array at once, so that a large load never holds them all as
        tuples of Python floats.
        """
        held: list[tuple[MemoryItem, np.ndarray | None]] = []
        for start in range(0, len(items), BATCH):
            embedded = await with_embeddings(items[start : start + BATCH], self.embedder)
            held += map(_parted, embedded)
        for item, vector in held:
            self._store(item, vector)

    def _store(self, item: MemoryItem, vector: np.ndarray | None) -> None:
        """Hold ``item``, its embedding left out (:func:`_parted`): ``vector`` is it, in float64."""
        key = _key(item)
        existing = self._items.get(key)
        if existing is not None and existing.superseded_by and not item.superseded_by:
            item = item.model_copy(update={"superseded_by": existing.superseded_by})
        if existing is not None:
            self._unthread(key, existing)
            if changed(existing, item):
                self._versions.setdefault(key, []).append(self._whole(existing))
        else:
            self._ordered.pop(item.agent_id, None)
        self._items[key] = item
        if item.thread_id is not None and item.position is not None:
            thread = self._threads.setdefault((item.agent_id, item.thread_id), {})
            thread.setdefault(item.position, set()).add(key)
        self._owners.setdefault((item.agent_id, item.item_id), set()).add(item.user_id)
        index = self._indexes.get(item.agent_id)
        if index is None:
            index = self._indexes[item.agent_id] = AgentIndex()
        index.put(_doc_id(key), item, searchable_text(item), vector)
        self._keys[_doc_id(key)] = key
        if vector is None or not len(vector):
            self._embedded.discard(key)
        else:
            self._embedded.add(key)
        if item.supersedes:
            self._mark_superseded(item)

    def _mark_superseded(self, item: MemoryItem) -> None:
        old_key = (item.agent_id, item.user_id, item.supersedes or "")
        old = self._items.get(old_key)
        if old is not None and old.item_id != item.item_id:
            self._items[old_key] = marked = old.model_copy(update={"superseded_by": item.item_id})
            self._indexes[item.agent_id].mark(_doc_id(old_key), marked)

    def _unthread(self, key: Key, item: MemoryItem) -> None:
        """Forget ``item`` (stored under ``key``) in the thread index."""
        if item.thread_id is None or item.position is None:
            return
        thread = self._threads[(item.agent_id, item.thread_id)]
        keys = thread[item.position]
        keys.discard(key)
        if not keys:
            del thread[item.position]
        if not thread:
            del self._threads[(item.agent_id, item.thread_id)]

    def _whole(self, item: MemoryItem) -> MemoryItem:
        """Held ``item`` as it was put: with the embedding the index holds for it, if any.

        An item held without one (most, where no embedder is configured) is given as held.
        """
        key = (item.agent_id, item.user_id, item.item_id)
        if item.embedding is not None or key not in self._embedded:
            return item
        vector = self._indexes[item.agent_id].vector(_doc_id(key))
        return item if vector is None else item.model_copy(update={"embedding": vector})

    async def get(self, tenant: Tenant, item_ids: list[str]) -> list[MemoryItem]:
        found = (self._visible(tenant, item_id) for item_id in item_ids)
        return [self._whole(item) for item in found if item is not None]

    def _visible(self, tenant: Tenant, item_id: str) -> MemoryItem | None:
        """The item of ``item_id`` that ``tenant`` is given (its own first), if any.

        An id most often has one owner: its item is given when visible, with no choice to make.
        """
        users = self._owners.get((tenant.agent_id, item_id), ())
        if len(users) == 1:
            (user,) = users
            only = self._items[(tenant.agent_id, user, item_id)]
            return only if visible_to(only, tenant) else None
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
        self._unthread(key, item)
        self._embedded.discard(key)
        self._versions.pop(key, None)
        self._ordered.pop(key[0], None)
        users = self._owners[(key[0], key[2])]
        users.discard(key[1])
        if not users:
            del self._owners[(key[0], key[2])]
        index = self._indexes[key[0]]
        index.remove(_doc_id(key))
        if not index:
            del self._indexes[key[0]]
        del self._keys[_doc_id(key)]
        return 1

    def _live(self, tenant: Tenant, query: MemoryQuery) -> dict[str, MemoryItem]:
        """Every live item ``tenant`` may see that ``query`` asks for, by index id (a full pass)."""
        return {
            _doc_id(key): self._whole(item)
            for key, item in self._items.items()
            if _wanted(item, tenant, query)
        }

    async def search(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]:
        """The best ``query.limit`` hits, as :func:`~prefrontal.stores.capabilities.ranked_search`
        ranks this store's lexical and vector candidates, scored in arrays."""
        embedding = await query_embedding(query, self.embedder)
        index = self._indexes.get(tenant.agent_id)
        if index is None:
            return []
        vector = None if embedding is None else _unit_query(embedding)
        now = microseconds(query.now)
        hits = index.search(tenant, now, query.kinds, query_terms(query.text), vector, query.limit)
        items, keys = self._items, self._keys
        if not self._embedded:  # no item is held apart from its embedding: each is whole
            return [_scored(items[keys[doc]], score, signals) for doc, score, signals in hits]
        whole = self._whole
        return [_scored(whole(items[keys[doc]]), score, signals) for doc, score, signals in hits]

    async def lexical_matches(
        self, tenant: Tenant, query: MemoryQuery, terms: Sequence[str]
    ) -> LexicalMatches:
        """The candidates in the agent's index among the live items ``tenant`` may see."""
        index = self._indexes.get(tenant.agent_id)
        if index is None:
            return LexicalMatches(Corpus(0, 0), [0] * len(terms), [])
        return index.lexical_matches(tenant, microseconds(query.now), query.kinds, terms)

    async def vector_matches(
        self, tenant: Tenant, query: MemoryQuery, embedding: Sequence[float]
    ) -> dict[str, float]:
        """Cosine of ``embedding`` with each live visible embedded item of its size.

        One mask and one matrix-vector product over each segment the tenant
        may see (:mod:`prefrontal.stores.memory.segment`), no pass over the items.
        """
        index = self._indexes.get(tenant.agent_id)
        if index is None:
            return {}
        query_vector = _unit_query(embedding)
        return index.cosines(tenant, microseconds(query.now), query.kinds, query_vector)

    async def items_by_key(self, tenant: Tenant, keys: Sequence[str]) -> Mapping[str, MemoryItem]:
        """The items of index ids ``keys`` (agent, item id, owner), by key."""
        found = ((key, self._items.get(self._keys.get(key, _NONE))) for key in keys)
        return {key: self._whole(item) for key, item in found if item is not None}

    async def around(
        self, tenant: Tenant, item_ids: list[str], *, radius: int, now: datetime | None = None
    ) -> list[MemoryItem]:
        """The live visible neighbours of the anchors ``item_ids`` within ``radius`` positions
        in their threads (not the anchors), by thread, position and id.

        Found in the thread index, judged by the keys they are held under (agent,
        owner) and their scope, and made whole only once kept.
        """
        agent, user = tenant.agent_id, tenant.user_id
        asked = set(item_ids)
        now = now or utc_now()
        near: set[Key] = set()
        for anchor in map(self._visible, repeat(tenant), asked):
            if anchor is None or anchor.thread_id is None or anchor.position is None:
                continue
            thread = self._threads.get((anchor.agent_id, anchor.thread_id), {})
            low, high = anchor.position - radius, anchor.position + radius
            positions = range(low, high + 1) if high - low < len(thread) else list(thread)
            for position in positions:
                if low <= position <= high:
                    near.update(thread.get(position, ()))
        items = self._items
        kept = [
            item
            for key, item in zip(near, map(items.__getitem__, near), strict=True)
            if key[0] == agent
            and (key[1] == user or item.scope is Scope.SHARED)
            and key[2] not in asked
            and item.is_live(now)
        ]
        kept.sort(key=lambda i: (i.thread_id or "", i.position or 0, i.item_id))
        if not self._embedded:  # no item is held apart from its embedding: each is whole
            return kept
        return [self._whole(item) for item in kept]

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
        """A keyset page (:class:`~prefrontal.stores.memory_pages.ListsMemories`): a binary
        search into the agent's sorted keys, then a walk down them to ``limit`` matches."""
        keys = self._ordered.get(tenant.agent_id)
        if keys is None:
            keys = sorted((k[2], k[1]) for k in self._items if k[0] == tenant.agent_id)
            self._ordered[tenant.agent_id] = keys
        end = (
            len(keys)
            if below is None
            else (bisect_right if inclusive else bisect_left)(keys, below)
        )
        found: list[MemoryItem] = []
        for index in range(end - 1, -1, -1):
            if len(found) >= limit:
                break
            item_id, user_id = keys[index]
            item = self._items[(tenant.agent_id, user_id, item_id)]
            if (
                visible_to(item, tenant)
                and (kinds is None or item.kind in kinds)
                and (scope is None or item.scope is scope)
            ):
                found.append(self._whole(item))
        return found

    async def versions(self, owner: Tenant, item_id: str) -> list[MemoryItem]:
        """The replaced versions of ``owner``'s item, oldest first."""
        return list(self._versions.get((owner.agent_id, owner.user_id, item_id), ()))

    async def record_recall(self, tenant: Tenant, item_ids: list[str], at: datetime) -> None:
        """Count a recall of each visible item of ``item_ids`` at ``at``: a new version of each
        held (the ones handed out are frozen), copied with its two counters changed.

        A turn counts about a hundred: an id of one owner (most) is looked up as
        :meth:`_visible` does it, inline, under the key it is held by.
        """
        agent, user = tenant.agent_id, tenant.user_id
        items, owners, shared = self._items, self._owners, Scope.SHARED
        for item_id in item_ids:
            users = owners.get((agent, item_id), ())
            if len(users) == 1:
                (owner,) = users
                key = (agent, owner, item_id)
                item = items[key]
                if owner == user or item.scope is shared:  # visible_to: the agent is the key's
                    items[key] = _recalled(item, at)
            elif (found := self._visible(tenant, item_id)) is not None:
                items[_key(found)] = _recalled(found, at)


def _recalled(item: MemoryItem, at: datetime) -> MemoryItem:
    """``item.model_copy(update=...)`` of its recall count plus one and ``at``, copied
    unchecked (:func:`~prefrontal.trusted.evolve`): a held item, a count and a time."""
    return evolve(item, {"recall_count": item.recall_count + 1, "last_recalled_at": at})


def _scored(item: MemoryItem, score: float, signals: dict[str, float]) -> ScoredMemory:
    """``ScoredMemory(item=item, score=score, signals=signals)`` without validating again
    what the index made (:func:`~prefrontal.trusted.assemble`): a held item, a float score
    and a fresh dictionary of floats."""
    return assemble(ScoredMemory, {"item": item, "score": score, "signals": signals})


def _parted(item: MemoryItem) -> tuple[MemoryItem, np.ndarray | None]:
    """``item`` without its embedding, and the embedding in float64; an empty one stays put."""
    if not item.embedding:
        return item, None
    vector = np.array(item.embedding, dtype=np.float64)
    return item.model_copy(update={"embedding": None}), vector


def _wanted(item: MemoryItem, tenant: Tenant, query: MemoryQuery) -> bool:
    """Whether a search of ``tenant`` for ``query`` may return ``item``: visible, live, its kind."""
    return (
        visible_to(item, tenant)
        and item.is_live(query.now)
        and (query.kinds is None or item.kind in query.kinds)
    )


def _unit_query(embedding: Sequence[float]) -> np.ndarray:
    """The query's unit vector; empty (nothing is scored) when it is all zeros."""
    if not any(embedding):
        return np.zeros(0)
    return unit(tuple(embedding))


def _key(item: MemoryItem) -> Key:
    return (item.agent_id, item.user_id, item.item_id)


def _doc_id(key: Key) -> str:
    """The index's id of an item: agent, then item id, then owner, so that ties
    within one agent break by item id and owner, as in the durable backends."""
    return f"{key[0]}\x1f{key[2]}\x1f{key[1]}"
