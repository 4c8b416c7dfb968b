"""``MemoryAPI``: seed 002's memory API over a set of stores.

``remember``, ``recall``, ``get``, ``list``, ``history``, ``update`` and
``forget`` act for one tenant (an agent and one of its users), under the
same tenancy rules as a turn; ``erase`` removes everything of one user from every store.

Bad input raises ``ValueError`` with a message that names the argument
(pydantic's ``ValidationError``, a ``ValueError`` too, where a model field
refuses it); an id that names no item of the tenant raises
:class:`~prefrontal.errors.NotFoundError` where the call needs one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal

from ulid import ULID

from prefrontal.budgets.tokens import TokenCounter, default_counter
from prefrontal.config import RecallConfig
from prefrontal.errors import NotFoundError
from prefrontal.exchange.forgetting import SummaryRebuild, forget_messages
from prefrontal.forgetting import forget_everything
from prefrontal.ids import checked_id, is_blank
from prefrontal.memory.buffers import forget_in_buffers
from prefrontal.memory.erasure import ErasureReport, erase, readmit, scrub
from prefrontal.memory.fence import TenantFence
from prefrontal.memory.listing import MemoryPage, MemoryVersion, memory_history, memory_page
from prefrontal.memory.recall import STORE_NAMES, MemoryStoreName, fused, search_both
from prefrontal.memory.turn_traces import message_turn, redact
from prefrontal.stores.long_term import (
    AUTHOR_KEY,
    SOURCE_KEY,
    MemoryItem,
    MemoryKind,
    MemoryStore,
    ScoredMemory,
)
from prefrontal.stores.records import MetadataValue, utc_now
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Scope, Tenant, owns, precedence

Clock = Callable[[], datetime]
MAX_TOP_K = 1_000


def new_ulid() -> str:
    """A new ULID: sortable by creation time, unique without coordination."""
    return str(ULID())


class MemoryAPI:
    """Remember, recall, update and forget memories; erase a user.

    ``clock`` stamps what is remembered and is the moment recall ranks at;
    ``ids`` makes the ids of remembered items (ULIDs by default); ``counter``
    counts the tokens ``recall(max_tokens=...)`` bounds; ``config`` holds the
    rerank weights of phases 5 and 6 (the orchestrator passes its own).
    ``remember``, ``update`` and ``forget`` hold the tenant's ``fence``
    (:mod:`prefrontal.memory.fence`): an ``erase`` waits for them, and they
    wait for an ``erase`` in progress. ``summary`` is how ``forget`` rebuilds
    a rolling summary that folded a forgotten message (the orchestrator
    passes its summarizer and settings).
    """

    def __init__(
        self,
        stores: Stores,
        *,
        clock: Clock = utc_now,
        ids: Callable[[], str] = new_ulid,
        counter: TokenCounter | None = None,
        config: RecallConfig | None = None,
        fence: TenantFence | None = None,
        summary: SummaryRebuild | None = None,
    ) -> None:
        self.stores = stores
        self.summary = summary or SummaryRebuild()
        self.fence = fence or TenantFence()
        """Erase's barrier: the orchestrator shares its own, so erase fences its turns too."""
        self._clock = clock
        self._ids = ids
        self._counter = counter
        self.config = config or RecallConfig()

    # The signature the public contract fixes: keyword-only past the content.
    async def remember(  # noqa: PLR0913
        self,
        tenant: Tenant,
        content: str,
        *,
        importance: float = 0.5,
        source: str | None = None,
        kind: MemoryKind = MemoryKind.FACT,
        store: Literal["episodic", "semantic"] = "semantic",
        scope: Scope = Scope.PRIVATE,
        tags: Sequence[str] = (),
        item_id: str | None = None,
        author: str | None = None,
    ) -> MemoryItem:
        """Store ``content`` as a new memory of ``tenant`` and return it.

        Semantic memory (facts, preferences) unless ``store="episodic"``.
        ``source`` (who or what it came from: ``"user"``, a tool's name) is
        kept as the item's ``metadata["source"]``; ``author`` (who wrote it:
        an API key's name) as ``metadata["author"]``, and a shared memory
        without one names the tenant's user as its author, so that every
        user whose turns it reaches sees who wrote it. The id is generated unless
        ``item_id`` is given; an item of the tenant with that id in that
        store is replaced. It is searchable as soon as this returns.
        """
        _check_text("content", content)
        _check_importance(importance)
        target = self._store(store)
        item = MemoryItem(
            item_id=self._ids() if item_id is None else _checked_id(item_id),
            agent_id=tenant.agent_id,
            user_id=tenant.user_id,
            scope=scope,
            kind=kind,
            content=content,
            importance=importance,
            tags=tuple(tags),
            metadata=_written_by(tenant, scope, source, author),
            created_at=self._clock(),
        )
        async with self.fence.holding(tenant, "remember"):
            await target.put(item)
        return item

    async def recall(
        self,
        tenant: Tenant,
        query: str,
        *,
        top_k: int = 10,
        kinds: Sequence[MemoryKind] | None = None,
        max_tokens: int | None = None,
    ) -> list[ScoredMemory]:
        """The ``top_k`` memories of episodic and semantic memory that best match ``query``.

        Searched and reranked as phases 5 and 6 do (hybrid search, then
        relevance, recency, importance and novelty), the two stores' hits
        merged by score, best first. Only live items ``tenant`` may see. With
        ``max_tokens``, hits stop before their contents would pass that many
        tokens. Each item returned has its recall counted
        (``recall_count``, ``last_recalled_at``).
        """
        _check_text("query", query)
        if not _is_count(top_k) or not 1 <= top_k <= MAX_TOP_K:
            raise ValueError(f"top_k must be 1 to {MAX_TOP_K}, an integer, got {top_k!r}")
        if max_tokens is not None and (not _is_count(max_tokens) or max_tokens < 1):
            raise ValueError(f"max_tokens must be at least 1, an integer, got {max_tokens!r}")
        now = self._clock()
        hits = await search_both(
            self.stores, tenant, query, limit=top_k, kinds=kinds, now=now, config=self.config
        )
        chosen = self._within(fused(hits, top_k), max_tokens)
        for name in STORE_NAMES:
            ids = [hit.item.item_id for store, hit in chosen if store == name]
            if ids:
                await self._store(name).record_recall(tenant, ids, now)
        return [hit for _, hit in chosen]

    def _within(
        self, chosen: list[tuple[MemoryStoreName, ScoredMemory]], max_tokens: int | None
    ) -> list[tuple[MemoryStoreName, ScoredMemory]]:
        if max_tokens is None:
            return chosen
        if self._counter is None:
            self._counter = default_counter()
        kept, used = [], 0
        for name, hit in chosen:
            used += self._counter.count(hit.item.content)
            if used > max_tokens:
                break
            kept.append((name, hit))
        return kept

    async def get(self, tenant: Tenant, item_id: str) -> MemoryItem | None:
        """The memory ``item_id`` names for ``tenant``, live or not, or ``None``.

        Ids are unique per agent and user: where ``tenant``'s own item and
        items other users shared carry one id, its own comes first, else the
        shared one whose owner's user id sorts first
        (:func:`~prefrontal.stores.tenancy.precedence`); semantic memory
        before episodic between equals.
        """
        found = await self._found(tenant, _checked_id(item_id))
        return found[0][1] if found else None

    async def update(
        self,
        tenant: Tenant,
        item_id: str,
        *,
        content: str | None = None,
        importance: float | None = None,
        shared: bool = False,
        author: str | None = None,
    ) -> MemoryItem:
        """Change the content or importance of ``tenant``'s own memory ``item_id``; return it.

        The item is re-indexed (new content is searched by its new words);
        with new content its embedding is recomputed where the store has an
        embedder, and dropped where it has none. Its id, owner, times and
        recall counts stay; ``author`` (who changes it: an API key's name),
        when given, becomes its author, so that a shared memory another
        curator rewrote names that curator. Raises :class:`~prefrontal.errors.NotFoundError`
        when the tenant owns no item of that id: another user's shared item
        can be read, not changed, unless ``shared`` (the caller holds the
        right to write shared memory), when a shared item the tenant sees is
        changed whoever wrote it.
        """
        if content is None and importance is None:
            raise ValueError("nothing to update: give content, importance or both")
        if content is not None:
            _check_text("content", content)
        if importance is not None:
            _check_importance(importance)
        async with self.fence.holding(tenant, "update"):
            found = await self._found(tenant, _checked_id(item_id))
            owned = [(name, item) for name, item in found if _may_change(tenant, item, shared)]
            if not owned:
                raise NotFoundError(f"no memory {item_id!r} of user {tenant.user_id!r}")
            now = self._clock()
            revised = [
                (name, _revised(item, content, importance, author, now)) for name, item in owned
            ]
            for name, item in revised:
                await self._store(name).put(item)
        return revised[0][1]

    async def forget(self, tenant: Tenant, item_id: str, *, shared: bool = False) -> bool:
        """Remove ``tenant``'s own memory or message ``item_id`` everywhere it shows;
        ``True`` if anything was removed.

        One id, one record: a memory, or one message of a turn
        (``<turn>:user`` or ``<turn>:reply``; forget both to forget the
        exchange). What goes: the episodic and semantic items of that id,
        the conversation message of that id (the rolling summary is rebuilt
        or dropped when it had folded it: :mod:`prefrontal.exchange.forgetting`),
        its text in its turn's trace (:mod:`prefrontal.memory.turn_traces`), and
        every copy in the tenant's working-memory sessions (the turn's exchange
        item, a summary that folded it: :mod:`prefrontal.memory.buffers`). The
        turn's extraction, queued or running, is stopped and waited for first
        (:meth:`~prefrontal.memory.fence.TenantFence.stopping`): no fact drawn
        from a forgotten message lands after the forget.

        Another user's shared item of that id is not removed, unless
        ``shared`` (the caller holds the right to write shared memory): then
        the shared items of that id the tenant sees go too, whoever wrote
        them. A shared memory that goes also leaves the other users'
        sessions. An older version the forgotten item had superseded stays
        superseded. Where the backend can (SQLite), no copy of it stays on
        disk: its full-text segments are rewritten and the log truncated. Every
        in-process cache is emptied (:func:`~prefrontal.forgetting.forget_everything`).
        """
        wanted = [_checked_id(item_id)]
        async with self.fence.holding(tenant, "forget"):
            turn = message_turn(wanted[0])
            if turn is not None:  # no fact drawn from the message lands after this
                await self.fence.stopping(tenant, "extraction", turn)
            found = await self._found(tenant, wanted[0])
            removed = [await self._store(name).delete(tenant, wanted) for name in STORE_NAMES]
            gone = [item for _, item in found if owns(tenant, item)]
            if shared:
                for name, item in found:
                    if item.scope is Scope.SHARED and not owns(tenant, item):
                        author = Tenant(agent_id=item.agent_id, user_id=item.user_id)
                        removed.append(await self._store(name).delete(author, wanted))
                        gone.append(item)
            spoken = await forget_messages(
                self.stores.conversation,
                tenant,
                wanted,
                rebuild=self.summary,
                count_tokens=self._count,
                now=self._clock(),
            )
            removed.append(len(spoken.messages))
            await redact(self.stores.traces, tenant, spoken.messages)
            everyone = any(item.scope is Scope.SHARED for item in gone)
            removed.append(
                await forget_in_buffers(
                    self.stores.working_memory, tenant, wanted, everyone=everyone
                )
            )
            if sum(removed):
                await scrub(self.stores, (*STORE_NAMES, "conversation", "traces"))
                forget_everything()
        return sum(removed) > 0

    def _count(self, text: str) -> int:
        if self._counter is None:
            self._counter = default_counter()
        return self._counter.count(text)

    async def erase(self, agent_id: str, user_id: str) -> ErasureReport:
        """Remove everything of one user of one agent from every store; the counts per store.

        Goals, conversation turns and summary, episodic and semantic memory,
        scratch entries, working-memory sessions and traces that the user
        owns, private or shared by them. Other users' records are untouched;
        the copies of the user's shared memories in their working-memory
        sessions go (``copies_dropped``). Safe to repeat.

        A barrier (:mod:`prefrontal.memory.fence`): the user's work in flight
        in this process is cancelled (writes behind turns, extractions) or
        waited for (``end_turn``, memory writes) before anything is removed,
        and no write of theirs begun before the erase lands after it. The
        report says what was removed and what was cancelled.
        """
        tenant = Tenant(agent_id=agent_id, user_id=user_id)
        async with self.fence.erasing(tenant) as cancelled:
            report = await erase(self.stores, tenant, erased_at=self._clock())
        return report.model_copy(update={"cancelled": dict(cancelled.counts)})

    async def readmit(self, agent_id: str, user_id: str) -> bool:
        """Let an erased user's id be written again; ``True`` if it had an erasure record.

        On SQLite and PostgreSQL an erase leaves a record that refuses every
        later write of the user (:class:`~prefrontal.errors.ErasedTenantError`),
        from any process over the database, so that work in flight elsewhere
        never brings the user back. Call this once that work is over and the
        id is to name a user again (the in-memory backend keeps no record).
        """
        return await readmit(self.stores, Tenant(agent_id=agent_id, user_id=user_id))

    async def _found(
        self, tenant: Tenant, item_id: str
    ) -> list[tuple[MemoryStoreName, MemoryItem]]:
        """The item of ``item_id`` each store gives ``tenant``, the one ``get`` returns first."""
        found = [
            (name, item)
            for name in STORE_NAMES
            for item in await self._store(name).get(tenant, [item_id])
        ]
        order = {name: rank for rank, name in enumerate(STORE_NAMES)}
        return sorted(found, key=lambda row: (precedence(row[1], tenant), order[row[0]]))

    def _store(self, name: str) -> MemoryStore:
        if name not in STORE_NAMES:
            raise ValueError(f"store must be one of {sorted(STORE_NAMES)}, got {name!r}")
        store: MemoryStore = getattr(self.stores, name)
        return store

    async def history(self, tenant: Tenant, memory_id: str) -> list[MemoryVersion]:
        """Every version of the memory ``get`` returns for ``memory_id``, oldest first.

        Each says what it held, who wrote it (``metadata["author"]``), when
        (its ``updated_at``, else ``created_at``) and which fields changed
        from the one before; the last is the current one. A version is kept
        each time a put replaces the item with one that differs (an
        ``update``, a ``remember`` with the same id), and goes when the item
        is forgotten or its user erased. Of another user's shared memory,
        only the versions that were shared are returned. Raises
        :class:`~prefrontal.errors.NotFoundError` when ``tenant`` sees no
        memory of that id. See :mod:`prefrontal.memory.listing`.
        """
        found = await self._found(tenant, _checked_id(memory_id))
        if not found:
            raise NotFoundError(f"no memory {memory_id!r} of user {tenant.user_id!r}")
        store, item = found[0]
        return await memory_history(self.stores, tenant, item, store)

    # Last in the class: past this, ``list`` names the method, not the type.
    async def list(
        self,
        tenant: Tenant,
        *,
        kinds: Sequence[MemoryKind] | None = None,
        store: MemoryStoreName | None = None,
        scope: Scope | None = None,
        limit: int = 50,
        after: str | None = None,
    ) -> MemoryPage:
        """A page of the memories ``tenant`` may see, newest first; live or not.

        Its own, private or shared, and the agent's shared memories of
        other users, of episodic and semantic memory (``store`` to list one),
        of ``kinds`` and ``scope`` when given. At most ``limit`` (1 to 1,000);
        pass the page's ``next_cursor`` as ``after`` for the next page, with
        the same filters. Paging is by keyset (item id, owner, store
        descending): a page costs the same wherever it is, and items written
        meanwhile never shift a later page. See :mod:`prefrontal.memory.listing`.
        """
        return await memory_page(
            self.stores, tenant, limit=limit, after=after, kinds=kinds, store=store, scope=scope
        )


def _check_text(name: str, text: str) -> None:
    if is_blank(text):
        raise ValueError(f"{name} must be non-empty text")


def _is_count(value: object) -> bool:
    """True for an ``int`` (not a bool): a float, NaN and the infinities included, is no count.

    NaN compares false with every bound, so a check by comparison alone lets it through.
    """
    return isinstance(value, int) and not isinstance(value, bool)


def _check_importance(importance: float) -> None:
    if isinstance(importance, bool) or not isinstance(importance, (int, float)):
        raise ValueError(f"importance must be a number from 0.0 to 1.0, got {importance!r}")
    if math.isnan(importance) or not 0.0 <= importance <= 1.0:
        raise ValueError(f"importance must be from 0.0 to 1.0, got {importance!r}")


def _checked_id(item_id: str) -> str:
    return checked_id("item_id", item_id)


def _written_by(
    tenant: Tenant, scope: Scope, source: str | None, author: str | None
) -> dict[str, MetadataValue]:
    """The metadata of a new memory: its source and its author (a shared one always has one)."""
    metadata: dict[str, MetadataValue] = {} if source is None else {SOURCE_KEY: source}
    if author is not None or scope is Scope.SHARED:
        metadata[AUTHOR_KEY] = author or tenant.user_id
    return metadata


def _may_change(tenant: Tenant, item: MemoryItem, shared: bool) -> bool:
    """``tenant`` owns ``item``, or it is shared and the caller may write shared memory."""
    return owns(tenant, item) or (shared and item.scope is Scope.SHARED)


def _revised(
    item: MemoryItem,
    content: str | None,
    importance: float | None,
    author: str | None,
    now: datetime,
) -> MemoryItem:
    """``item`` with the new content or importance (and author), changed at ``now``, validated;
    new content drops the embedding."""
    data = item.model_dump() | {"updated_at": now}
    if author is not None:
        data["metadata"] = data["metadata"] | {AUTHOR_KEY: author}
    if content is not None and content != item.content:
        data |= {"content": content, "embedding": None}
    if importance is not None:
        data["importance"] = importance
    return MemoryItem.model_validate(data)
