"""``PrefrontalStore``: LangGraph's ``BaseStore`` over one of prefrontal's memory stores.

What a graph puts is a memory item of one tenant (an agent and one of its
users) in prefrontal's semantic store (episodic for the event kinds), so the
turns of that user recall it. ``search(query=...)`` ranks every item under
the prefix that the filter admits (a query orders, it never narrows) by the
similarity of the query to the item's index fields, in ``[0, 1]``
(:mod:`prefrontal.integrations.langgraph.indexing`); items put with
``index=False`` follow, without a score. How an item is kept is described
in :mod:`prefrontal.integrations.langgraph.records`.

The tenant is fixed (``user_id=``) or read from the namespace
(``user_label=i``: label ``i`` of every namespace is the user id, as in
LangGraph's usual ``("memories", user_id)``); an operation whose namespace
or prefix names no user is refused, so no call reaches two users' memory.

Puts and deletes on a database whose writes can share a transaction
(SQLite) are group-committed (:mod:`prefrontal.integrations.langgraph.group_commit`):
those arriving while a commit is in flight share the next one, and each
call returns once its own write has committed.

Limits: a search without a query, and ``list_namespaces``, see at most the
1,000 items prefrontal's search returns for one namespace prefix (its
largest page), and so does a search with a query. The async
methods run on the caller's event loop; the sync ones on a private event
loop thread, started once (under a lock) by the first sync call of any
thread, so any number of parallel sync nodes may share a fresh store
(stores used from them should not also be used from another loop at the
same time).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar

import anyio.from_thread
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.base.embed import ensure_embeddings

from prefrontal.integrations.langgraph import indexing, records
from prefrontal.integrations.langgraph.group_commit import GroupCommit
from prefrontal.integrations.langgraph.matching import matches, passes, under
from prefrontal.stores.durable import batching_database
from prefrontal.stores.long_term import MemoryItem, MemoryKind, MemoryQuery, MemoryStore
from prefrontal.stores.records import utc_now
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant

T = TypeVar("T")
EPISODIC_KINDS = frozenset({MemoryKind.EVENT, MemoryKind.OBSERVATION, MemoryKind.TOOL_RESULT})
MAX_CANDIDATES = 1_000
MAX_VECTORS = 10_000
"""Items whose text vectors a store with an embedding function keeps between searches."""


class PrefrontalStore(BaseStore):
    """A LangGraph store whose items are prefrontal memories of one tenant at a time.

    ``kind`` is the memory kind items are stored as (``fact`` by default, in
    semantic memory; event kinds go to episodic memory). ``clock`` stamps
    items and decides their expiry (TTL in minutes, as LangGraph gives it,
    becomes the item's ``valid_until``). ``ttl`` is LangGraph's
    ``TTLConfig`` (``default_ttl``; ``refresh_on_read``: reads push an
    item's expiry back only when it is set, as in LangGraph's TTL stores). ``index`` is
    LangGraph's index configuration; its ``fields`` (default ``["$"]``, the
    whole value) are what a query is matched against, unless a put names
    its own (``index=False``: the item is never matched, and follows the
    matched items in a query's results).
    """

    supports_ttl = True

    def __init__(
        self,
        stores: Stores,
        *,
        agent_id: str,
        user_id: str | None = None,
        user_label: int | None = None,
        kind: MemoryKind = MemoryKind.FACT,
        clock: Callable[[], datetime] = utc_now,
        ttl: TTLConfig | None = None,
        index: Mapping[str, Any] | None = None,
    ) -> None:
        if (user_id is None) == (user_label is None):
            raise ValueError("give exactly one of user_id (a fixed user) or user_label")
        episodic = kind in EPISODIC_KINDS
        self._memory: MemoryStore = stores.episodic if episodic else stores.semantic
        self._writes = GroupCommit(batching_database([self._memory]))
        """Puts and deletes arriving while a commit is in flight share the next one."""
        self._agent_id = agent_id
        self._user_id = user_id
        self._fixed = None if user_id is None else Tenant(agent_id=agent_id, user_id=user_id)
        """The one tenant of a store with a fixed user (validated once, here)."""
        self._user_label = user_label
        self._kind = kind
        self._clock = clock
        self.ttl_config = ttl
        self.index_config = None if index is None else dict(index)
        """LangGraph's index configuration, as given."""
        fields = (index or {}).get("fields") or (index or {}).get("text_fields")
        self._fields = [str(f) for f in fields or [indexing.WHOLE]]
        embed = (index or {}).get("embed")
        self.embeddings: Embeddings | None = None if embed is None else ensure_embeddings(embed)
        """The embedding function of ``index``, if it gives one: queries are then scored by it."""
        self._vectors: dict[tuple[str, str, tuple[str, ...]], list[list[float]]] = {}
        self._portal_context: Any = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._portal_lock = threading.Lock()

    # -- LangGraph's two entry points ---------------------------------------

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; one result each (``None`` for a put or delete).

        Every operation is checked first (its kind, namespace, user and
        index fields): one the store refuses fails the batch before any
        operation of it runs.
        """
        listed = list(ops)
        for op in listed:
            self._check(op)
        return [await self._run(op) for op in listed]

    def _check(self, op: Op) -> None:
        """Raise what running ``op`` would raise before touching the store."""
        if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
            raise ValueError(f"unknown store operation: {type(op).__name__}")
        validate_op_namespace(op)
        if isinstance(op, (GetOp, PutOp)):
            self._tenant(op.namespace)
        elif isinstance(op, SearchOp):
            self._tenant(tuple(op.namespace_prefix))
        else:
            self._tenant(_user_prefix(tuple(op.match_conditions or ())))
        if isinstance(op, PutOp):
            records.check_namespace(op.namespace)
            if op.index not in (None, False) and not (
                isinstance(op.index, list) and all(isinstance(f, str) for f in op.index)
            ):
                raise ValueError(f"index must be False or a list of field paths, not {op.index!r}")

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`abatch` from synchronous code, on the store's event loop thread."""
        listed = list(ops)
        return self._blocking().call(self.abatch, listed)

    def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """Await ``call()`` on the event loop thread the sync methods use, from sync code.

        For what must happen on that loop, such as closing stores only the
        sync methods used: ``store.run(stores.aclose)``.
        """
        return self._blocking().call(call)

    def close(self) -> None:
        """Stop the event loop thread the sync methods use (started on first use)."""
        with self._portal_lock:
            context, self._portal_context, self._portal = self._portal_context, None, None
        if context is not None:
            context.__exit__(None, None, None)

    def __enter__(self) -> PrefrontalStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _blocking(self) -> anyio.from_thread.BlockingPortal:
        """The running portal of the sync methods, started once under a lock by the first caller."""
        with self._portal_lock:
            if self._portal is None:
                context = anyio.from_thread.start_blocking_portal()
                self._portal = context.__enter__()
                self._portal_context = context
            return self._portal

    # -- operations -----------------------------------------------------------

    async def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return await self._get(op)
        if isinstance(op, PutOp):
            await self._put(op)
            return None
        if isinstance(op, SearchOp):
            return await self._search(op)
        if isinstance(op, ListNamespacesOp):
            return await self._list(op)
        raise ValueError(f"unknown store operation: {type(op).__name__}")

    def _tenant(self, namespace: tuple[str, ...]) -> Tenant:
        if self._fixed is not None:
            return self._fixed
        label = self._user_label
        assert label is not None
        if len(namespace) <= label or namespace[label] == "*":
            raise ValueError(f"namespace {namespace!r} names no user at label {label}")
        return Tenant(agent_id=self._agent_id, user_id=namespace[label])

    async def _stored(
        self, tenant: Tenant, namespace: tuple[str, ...], key: str
    ) -> MemoryItem | None:
        """The tenant's own item at ``(namespace, key)``, live or not."""
        found = await self._memory.get(tenant, [records.item_id(namespace, key)])
        own = [m for m in found if m.user_id == tenant.user_id and records.is_langgraph_item(m)]
        return own[0] if own else None

    async def _get(self, op: GetOp) -> Item | None:
        tenant = self._tenant(op.namespace)
        now = self._clock()
        memory = await self._stored(tenant, op.namespace, op.key)
        if memory is None or not memory.is_live(now):
            return None
        if self._refreshes(op.refresh_ttl):
            await self._refresh(memory, now)
        return records.to_item(memory)

    def _refreshes(self, asked: bool) -> bool:
        """Whether a read pushes expiry back: asked by the read and allowed by ``ttl``.

        As LangGraph's TTL stores define it: only a store whose
        ``TTLConfig`` sets ``refresh_on_read`` refreshes on read.
        """
        return asked and bool(self.ttl_config and self.ttl_config.get("refresh_on_read", False))

    async def _refresh(self, memory: MemoryItem, now: datetime) -> None:
        """Push back the expiry of an item read, by its own TTL."""
        ttl = records.ttl_of(memory)
        if ttl is None:
            return
        refreshed = records.to_memory(
            Tenant(agent_id=memory.agent_id, user_id=memory.user_id),
            records.namespace_of(memory),
            str(memory.metadata[records.ITEM_KEY]),
            records.to_item(memory).value,
            kind=memory.kind,
            created_at=memory.created_at,
            now=now,
            ttl_minutes=ttl,
            index=records.index_of(memory),
        )
        kept = refreshed.metadata | {records.UPDATED_KEY: memory.metadata[records.UPDATED_KEY]}
        kept_memory = refreshed.model_copy(update={"metadata": kept})
        await self._writes.run(lambda: self._memory.put(kept_memory))

    async def _put(self, op: PutOp) -> None:
        tenant = self._tenant(op.namespace)
        if op.value is None:
            gone = [records.item_id(op.namespace, op.key)]
            await self._writes.run(lambda: self._memory.delete(tenant, gone))
            return
        now = self._clock()
        before = await self._stored(tenant, op.namespace, op.key)
        memory = records.to_memory(
            tenant,
            op.namespace,
            op.key,
            op.value,
            kind=self._kind,
            created_at=now if before is None else before.created_at,
            now=now,
            ttl_minutes=op.ttl,
            index=op.index,
        )
        await self._writes.run(lambda: self._memory.put(memory))

    async def _candidates(self, tenant: Tenant, text: str, now: datetime) -> list[MemoryItem]:
        query = MemoryQuery(text=text, limit=MAX_CANDIDATES, now=now)
        hits = await self._memory.search(tenant, query)
        return [hit.item for hit in hits if records.is_langgraph_item(hit.item)]

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        tenant = self._tenant(prefix)
        now = self._clock()
        found = await self._candidates(tenant, records.prefix_tag(prefix), now)
        found.sort(key=lambda m: (records.updated_at(m), m.item_id), reverse=True)
        namespaces = _namespaces(found)
        admitted = [
            memory
            for memory in found
            if under(namespaces[memory.item_id], prefix)
            and (not op.filter or passes(records.value_of(memory), op.filter))
        ]
        chosen: list[tuple[MemoryItem, float | None]] = [(m, None) for m in admitted]
        if op.query and op.query.strip():
            texts = [
                indexing.indexed_texts(records.value_of(m), self._fields_of(m)) for m in admitted
            ]
            scores = await self._scores(op.query, admitted, texts)
            ranked = sorted(
                zip(admitted, scores, strict=True),
                key=lambda pair: (pair[1] is not None, pair[1] or 0.0),
                reverse=True,
            )
            chosen = list(ranked)
        page = chosen[op.offset : op.offset + op.limit]
        if self._refreshes(op.refresh_ttl):
            for memory, _ in page:
                await self._refresh(memory, now)
        return [records.to_search_item(memory, score) for memory, score in page]

    async def _scores(
        self, query: str, admitted: list[MemoryItem], texts: list[list[str]]
    ) -> list[float | None]:
        """Lexical similarities; with an embedding function, its cosines.

        The vectors of an item's texts are kept (for at most
        :data:`MAX_VECTORS` items) until the item is put again.
        """
        if self.embeddings is None:
            return indexing.similarities(query, texts)
        keys = [
            (m.item_id, str(m.metadata[records.UPDATED_KEY]), tuple(t))
            for m, t in zip(admitted, texts, strict=True)
        ]
        if len(self._vectors) > MAX_VECTORS:
            self._vectors.clear()
        missing = [k for k in keys if k not in self._vectors and k[2]]
        flat = [text for key in missing for text in key[2]]
        if flat:
            vectors = await self.embeddings.aembed_documents(flat)
            at = 0
            for key in missing:
                self._vectors[key] = vectors[at : at + len(key[2])]
                at += len(key[2])
        asked = await self.embeddings.aembed_query(query)
        return indexing.dense_similarities(asked, [self._vectors.get(k, []) for k in keys])

    def _fields_of(self, memory: MemoryItem) -> list[str] | None:
        """The fields a query is matched against for ``memory`` (``None``: not indexed)."""
        chosen = records.index_of(memory)
        if chosen is None:
            return self._fields
        return chosen if isinstance(chosen, list) and chosen else None

    async def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = tuple(op.match_conditions or ())
        prefix = _fixed_prefix(conditions)
        tenant = self._tenant(_user_prefix(conditions))
        found = await self._candidates(tenant, records.prefix_tag(prefix), self._clock())
        namespaces = set(_namespaces(found).values())
        kept = {ns for ns in namespaces if all(matches(c, ns) for c in conditions)}
        if op.max_depth is not None:
            kept = {ns[: op.max_depth] for ns in kept}
        return sorted(kept)[op.offset : op.offset + op.limit]


def _namespaces(found: list[MemoryItem]) -> dict[str, tuple[str, ...]]:
    """The namespace of each item of ``found`` by item id, each distinct one decoded once."""
    decoded: dict[str, tuple[str, ...]] = {}
    return {memory.item_id: records.namespace_in(memory, decoded) for memory in found}


def _user_prefix(conditions: tuple[Any, ...]) -> tuple[str, ...]:
    """The path of the first prefix condition (where a namespace's user label is)."""
    for condition in conditions:
        if condition.match_type == "prefix":
            return tuple(condition.path)
    return ()


def _fixed_prefix(conditions: tuple[Any, ...]) -> tuple[str, ...]:
    """The leading labels before any wildcard of the first prefix condition."""
    fixed: list[str] = []
    for label in _user_prefix(conditions):
        if label == "*":
            break
        fixed.append(label)
    return tuple(fixed)
