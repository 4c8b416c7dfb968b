"""A memory backend with no ranking of its own: it yields candidates, the core ranks them.

``ListMemoryStore`` keeps items in a list and scans it: for a query it
counts terms (lexical candidates) and hands over stored vectors' cosines
(vector candidates); :func:`~prefrontal.stores.capabilities.ranked_search`
does the rest. It passes the whole memory conformance suite and ranks what
it holds exactly as the in-memory store does, which is what
docs/store-backends.md promises a new backend written against the core.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pytest

from prefrontal.retrieval.analysis import terms
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.retrieval.ranking import Candidate, Corpus, LexicalMatches
from prefrontal.retrieval.vectors import cosines, to_blob
from prefrontal.stores.capabilities import (
    LexicalSearch,
    VectorSearch,
    offers_lexical_search,
    offers_vector_search,
    ranked_search,
)
from prefrontal.stores.long_term import MemoryItem, MemoryQuery, ScoredMemory
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.memory_search import hit_key, searchable_text
from prefrontal.stores.tenancy import Tenant, owns, preferred, visible_to
from prefrontal.testing import DelayedStore
from prefrontal.testing.conformance import MemoryStoreSuite
from prefrontal.testing.synthetic import memories, questions

NOW = datetime(2026, 2, 1, tzinfo=UTC)
ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")


class ListMemoryStore:
    """Items in a list, each with its term counts; every query scans them all."""

    def __init__(self) -> None:
        self.items: list[tuple[MemoryItem, Counter[str]]] = []

    async def put(self, item: MemoryItem) -> None:
        await self.put_many([item])

    async def put_many(self, items: list[MemoryItem]) -> None:
        for item in items:
            old = self._own(item.agent_id, item.user_id, item.item_id)
            if old is not None and old.superseded_by and not item.superseded_by:
                item = item.model_copy(update={"superseded_by": old.superseded_by})
            self._drop(item.agent_id, item.user_id, item.item_id)
            self.items.append((item, Counter(terms(searchable_text(item)))))
            older = self._own(item.agent_id, item.user_id, item.supersedes or "")
            if older is not None and older.item_id != item.item_id:
                self._replace(older.model_copy(update={"superseded_by": item.item_id}))

    def _own(self, agent: str, user: str, item_id: str) -> MemoryItem | None:
        found = (
            i for i, _ in self.items if (i.agent_id, i.user_id, i.item_id) == (agent, user, item_id)
        )
        return next(found, None)

    def _drop(self, agent: str, user: str, item_id: str) -> int:
        kept = [
            e
            for e in self.items
            if (e[0].agent_id, e[0].user_id, e[0].item_id) != (agent, user, item_id)
        ]
        removed, self.items = len(self.items) - len(kept), kept
        return removed

    def _replace(self, item: MemoryItem) -> None:
        self.items = [(item if _same(i, item) else i, c) for i, c in self.items]

    async def get(self, tenant: Tenant, item_ids: list[str]) -> list[MemoryItem]:
        found = [
            preferred(
                (
                    i
                    for i, _ in self.items
                    if i.item_id == item_id and i.agent_id == tenant.agent_id
                ),
                tenant,
            )
            for item_id in item_ids
        ]
        return [item for item in found if item is not None]

    def _candidates(
        self, tenant: Tenant, query: MemoryQuery
    ) -> list[tuple[MemoryItem, Counter[str]]]:
        return [
            (item, counts)
            for item, counts in self.items
            if visible_to(item, tenant)
            and item.is_live(query.now)
            and (query.kinds is None or item.kind in query.kinds)
        ]

    async def search(self, tenant: Tenant, query: MemoryQuery) -> list[ScoredMemory]:
        return await ranked_search(self, tenant, query, query.embedding)

    async def lexical_matches(
        self, tenant: Tenant, query: MemoryQuery, terms: Sequence[str]
    ) -> LexicalMatches:
        readable = [c for item, c in self.items if visible_to(item, tenant)]
        corpus = Corpus(docs=len(readable), tokens=sum(c.total() for c in readable))
        frequencies = [sum(1 for c in readable if term in c) for term in terms]
        candidates = [
            Candidate(
                hit_key(item.item_id, item.user_id), counts.total(), [counts[t] for t in terms]
            )
            for item, counts in self._candidates(tenant, query)
            if any(t in counts for t in terms)
        ]
        return LexicalMatches(corpus, frequencies, candidates)

    async def vector_matches(
        self, tenant: Tenant, query: MemoryQuery, embedding: Sequence[float]
    ) -> dict[str, float]:
        held = [item for item, _ in self._candidates(tenant, query) if item.embedding]
        values = cosines(embedding, [to_blob(item.embedding or ()) for item in held])
        return {hit_key(i.item_id, i.user_id): v for i, v in zip(held, values, strict=True)}

    async def items_by_key(self, tenant: Tenant, keys: Sequence[str]) -> dict[str, MemoryItem]:
        by_key = {hit_key(i.item_id, i.user_id): i for i, _ in self.items if visible_to(i, tenant)}
        return {key: by_key[key] for key in keys if key in by_key}

    async def around(
        self, tenant: Tenant, item_ids: list[str], *, radius: int, now: datetime | None = None
    ) -> list[MemoryItem]:
        anchors = [
            (a.thread_id, a.position)
            for a in await self.get(tenant, item_ids)
            if a.thread_id is not None and a.position is not None
        ]
        if now is None:
            raise ValueError("this backend has no clock: pass now")
        moment = now
        near = [
            item
            for item, _ in self.items
            if visible_to(item, tenant)
            and item.is_live(moment)
            and item.item_id not in item_ids
            and item.position is not None
            and any(
                t == item.thread_id and p is not None and abs(p - item.position) <= radius
                for t, p in anchors
            )
        ]
        return sorted(near, key=lambda i: (i.thread_id or "", i.position or 0, i.item_id))

    async def record_recall(self, tenant: Tenant, item_ids: list[str], at: datetime) -> None:
        for item in await self.get(tenant, item_ids):
            self._replace(
                item.model_copy(
                    update={"recall_count": item.recall_count + 1, "last_recalled_at": at}
                )
            )

    async def delete(self, tenant: Tenant, item_ids: list[str]) -> int:
        return sum(self._drop(tenant.agent_id, tenant.user_id, i) for i in dict.fromkeys(item_ids))

    async def erase(self, tenant: Tenant) -> int:
        mine = [item for item, _ in self.items if owns(tenant, item)]
        return sum(self._drop(i.agent_id, i.user_id, i.item_id) for i in mine)


def _same(a: MemoryItem, b: MemoryItem) -> bool:
    return (a.agent_id, a.user_id, a.item_id) == (b.agent_id, b.user_id, b.item_id)


class TestListMemoryStore(MemoryStoreSuite):
    """The memory conformance suite, on a backend that only yields candidates."""

    @pytest.fixture
    def store(self) -> ListMemoryStore:
        return ListMemoryStore()


def test_the_minimal_backend_declares_both_capabilities() -> None:
    """Offering ``lexical_matches`` and ``vector_matches`` is what declares the capabilities."""
    store = ListMemoryStore()
    assert isinstance(store, LexicalSearch)
    assert isinstance(store, VectorSearch)
    assert not isinstance(object(), LexicalSearch)


class _KeyedOnly:
    """A backend that offers its items by key and no search capability."""

    async def items_by_key(self, tenant: Tenant, keys: Sequence[str]) -> dict[str, MemoryItem]:
        return {}


class _Disabled(ListMemoryStore):
    """The minimal backend with its lexical capability switched off."""

    lexical_matches = None  # type: ignore[assignment]


@pytest.mark.parametrize(
    "store",
    [
        ListMemoryStore(),
        InMemoryMemoryStore(),
        _KeyedOnly(),
        _Disabled(),
        object(),
        DelayedStore(ListMemoryStore(), 0),
        DelayedStore(_KeyedOnly(), 0),
    ],
    ids=lambda store: type(store).__name__,
)
def test_the_capability_checks_answer_as_isinstance(store: object) -> None:
    """Each store, or a proxy delegating to it, offers exactly what ``isinstance`` says it is."""
    assert offers_lexical_search(store) is isinstance(store, LexicalSearch)
    assert offers_vector_search(store) is isinstance(store, VectorSearch)


def test_a_proxy_offers_the_capabilities_of_the_store_it_wraps() -> None:
    """The check is asked of the instance: one proxy type offers what each wrapped store offers."""
    assert offers_lexical_search(DelayedStore(ListMemoryStore(), 0))
    assert not offers_lexical_search(DelayedStore(_KeyedOnly(), 0))


@pytest.mark.anyio
async def test_candidates_alone_rank_as_the_in_memory_store_ranks() -> None:
    """Same items, same order, same BM25 scores to the bit as the in-memory store, for two users."""
    items = [*memories(600, tenant=ALICE), *memories(200, tenant=BOB, seed=3, prefix="b")]
    reference, minimal = InMemoryMemoryStore(), ListMemoryStore()
    await reference.put_many(items)
    await minimal.put_many(items)
    for text in questions(30):
        for tenant, limit in ((ALICE, 10), (BOB, 5)):
            query = MemoryQuery(text=text, limit=limit, now=NOW)
            expected, got = (
                await reference.search(tenant, query),
                await minimal.search(tenant, query),
            )
            assert [(h.item.item_id, h.score, h.signals) for h in got] == [
                (h.item.item_id, h.score, h.signals) for h in expected
            ], text


@pytest.mark.anyio
async def test_fused_candidates_rank_as_the_in_memory_store_ranks() -> None:
    """With embeddings, the fused ranking of vector and lexical candidates is the in-memory store's."""
    embedder = HashingEmbedder(64)
    items = list(memories(300, tenant=ALICE))
    vectors = await embedder.embed([searchable_text(item) for item in items])
    as_stored = [tuple(np.asarray(v, dtype=np.float32).tolist()) for v in vectors]
    items = [i.model_copy(update={"embedding": v}) for i, v in zip(items, as_stored, strict=True)]
    reference, minimal = InMemoryMemoryStore(), ListMemoryStore()
    await reference.put_many(items)
    await minimal.put_many(items)
    for text in questions(15):
        (vector,) = await embedder.embed([text])
        query = MemoryQuery(text=text, limit=10, embedding=vector, now=NOW)
        expected, got = await reference.search(ALICE, query), await minimal.search(ALICE, query)
        assert [h.item.item_id for h in got] == [h.item.item_id for h in expected], text
        assert [h.score for h in got] == pytest.approx([h.score for h in expected], rel=1e-6)
