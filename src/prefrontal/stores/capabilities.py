"""Memory search against the core: backends find candidates, the core ranks them.

A memory backend need not rank anything. It keeps items and offers, as
optional capabilities, the candidates its engine finds:

- :class:`LexicalSearch`: the live items the tenant may see that hold a
  query term, each with its length and its count of each term, and the
  collection's statistics (:class:`~prefrontal.retrieval.ranking.LexicalMatches`);
  the core scores them with BM25 (:mod:`prefrontal.retrieval.ranking`);
- :class:`VectorSearch`: the cosine similarity of the query's embedding
  with the live items the tenant may see (a vector index's answer).

:func:`ranked_search` asks each capability the backend has, fuses the
signals (:func:`~prefrontal.stores.memory_search.best_hits`) and fetches the
winners through :meth:`KeyedItems.items_by_key`: a backend's ``search`` can
be that one call. Candidates are named by key, and ties in the fused score
break by key: with :func:`~prefrontal.stores.memory_search.hit_key` every
backend breaks them alike, so backends on the same data give the same hits
in the same order, with the same scores to the bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeGuard, runtime_checkable

from prefrontal.retrieval.ranking import LexicalMatches, query_terms, scores
from prefrontal.stores.long_term import MemoryItem, MemoryQuery, ScoredMemory
from prefrontal.stores.memory_search import Signals, best_hits
from prefrontal.stores.tenancy import Tenant


@runtime_checkable
class LexicalSearch(Protocol):
    """Capability: finds the items holding query terms, with what BM25 needs to score them."""

    async def lexical_matches(
        self, tenant: Tenant, query: MemoryQuery, terms: Sequence[str]
    ) -> LexicalMatches:
        """The live items ``tenant`` may see, of ``query.kinds``, that hold one of ``terms``.

        ``terms`` are the query's distinct analysed terms in sorted order
        (:func:`~prefrontal.retrieval.ranking.query_terms`), never empty; each
        candidate's counts follow that order. The statistics count every
        item the backend indexes (of every tenant, live or not), as an
        inverted index counts its documents.
        """
        ...


@runtime_checkable
class VectorSearch(Protocol):
    """Capability: the similarity of a query embedding to stored embeddings."""

    async def vector_matches(
        self, tenant: Tenant, query: MemoryQuery, embedding: Sequence[float]
    ) -> Mapping[str, float]:
        """Cosine similarity, by key, of ``embedding`` with live visible items of ``query.kinds``.

        Items whose embedding is missing or of another size are left out
        (or given 0); negative similarities count as 0.
        """
        ...


def offers_lexical_search(store: object) -> TypeGuard[LexicalSearch]:
    """Whether ``store`` is a :class:`LexicalSearch`: it has a ``lexical_matches`` (not ``None``).

    What ``isinstance`` answers for a one-method runtime-checkable protocol,
    without gathering the protocol's members again on every search. Asked of
    the instance, not its type: a delegating proxy offers what it wraps.
    """
    return getattr(store, "lexical_matches", None) is not None


def offers_vector_search(store: object) -> TypeGuard[VectorSearch]:
    """Whether ``store`` is a :class:`VectorSearch`, as :func:`offers_lexical_search` answers."""
    return getattr(store, "vector_matches", None) is not None


class KeyedItems(Protocol):
    """What every backend searched by :func:`ranked_search` offers: its items by key."""

    async def items_by_key(self, tenant: Tenant, keys: Sequence[str]) -> Mapping[str, MemoryItem]:
        """The items of the given candidate keys (those still there), by key."""
        ...


async def ranked_search(
    store: KeyedItems,
    tenant: Tenant,
    query: MemoryQuery,
    embedding: Sequence[float] | None = None,
) -> list[ScoredMemory]:
    """The best ``query.limit`` hits among the candidates ``store``'s capabilities find.

    ``"bm25"`` scores the lexical candidates when ``store`` is a
    :class:`LexicalSearch`, ``"vector"`` the vector ones when it is a
    :class:`VectorSearch` and there is an ``embedding``; both are fused.
    """
    signals = await gather_signals(store, tenant, query, embedding)
    return await scored_hits(store, tenant, signals, query.limit)


async def scored_hits(
    store: KeyedItems, tenant: Tenant, signals: Signals, limit: int
) -> list[ScoredMemory]:
    """The best ``limit`` hits of ``signals`` fused (:func:`best_hits`), their items read
    through ``store``; a hit whose item is no longer there is left out."""
    best = best_hits(signals, limit)
    if not best:
        return []
    items = await store.items_by_key(tenant, [key for key, _, _ in best])
    return [
        ScoredMemory(item=items[key], score=score, signals=own)
        for key, score, own in best
        if key in items
    ]


async def gather_signals(
    store: object,
    tenant: Tenant,
    query: MemoryQuery,
    embedding: Sequence[float] | None = None,
) -> dict[str, Mapping[str, float]]:
    """Each signal's scores by key, from the capabilities ``store`` has."""
    signals: dict[str, Mapping[str, float]] = {}
    if offers_lexical_search(store):
        words = query_terms(query.text)
        found = await store.lexical_matches(tenant, query, words) if words else None
        signals["bm25"] = {} if found is None else scores(found)
    if embedding is not None and offers_vector_search(store):
        similar = await store.vector_matches(tenant, query, embedding)
        signals["vector"] = {key: max(value, 0.0) for key, value in similar.items()}
    return signals
