"""Recall for applications and tools: both memory stores searched, reranked, fused.

Each store is searched as phases 5 and 6 search it (the store's hybrid
search: BM25, fused with vector similarity where it has an embedder, under
the same tenancy filter) and its hits reranked with that phase's weights
(:func:`~prefrontal.phases.memory_search.rerank`: relevance to the best hit,
recency, importance, novelty). Reranked scores of both stores are on one
scale (the best hit of each has relevance 1.0), so the two lists are merged
by score.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

import anyio

from prefrontal.config import RecallConfig
from prefrontal.phases.recall import rerank
from prefrontal.stores.long_term import MemoryKind, MemoryQuery, ScoredMemory
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant

MemoryStoreName = Literal["episodic", "semantic"]
STORE_NAMES: tuple[MemoryStoreName, ...] = ("semantic", "episodic")
"""The memory stores, in the order ties between them are broken."""
MIN_CANDIDATES = 20
"""Each store is asked for at least this many hits, so that the rerank has some to order."""


async def search_both(
    stores: Stores,
    tenant: Tenant,
    text: str,
    *,
    limit: int,
    kinds: Sequence[MemoryKind] | None,
    now: datetime,
    config: RecallConfig,
) -> dict[MemoryStoreName, list[ScoredMemory]]:
    """Each store's reranked hits for ``text``, searched concurrently."""
    query = MemoryQuery(
        text=text,
        limit=min(max(limit * 2, MIN_CANDIDATES), 1_000),
        kinds=None if kinds is None else tuple(kinds),
        now=now,
    )
    weights = {"episodic": config.episodic_weights, "semantic": config.semantic_weights}
    found: dict[MemoryStoreName, list[ScoredMemory]] = {}

    async def one(name: MemoryStoreName) -> None:
        hits = await getattr(stores, name).search(tenant, query)
        found[name] = rerank(hits, now, weights[name])

    async with anyio.create_task_group() as group:
        for name in STORE_NAMES:
            group.start_soon(one, name)
    return {name: found[name] for name in STORE_NAMES}


def fused(
    hits: dict[MemoryStoreName, list[ScoredMemory]], limit: int
) -> list[tuple[MemoryStoreName, ScoredMemory]]:
    """The ``limit`` best hits of both stores, best first (ties: store order, then item id)."""
    tagged = [
        (rank, name, hit) for rank, name in enumerate(STORE_NAMES) for hit in hits.get(name, [])
    ]
    tagged.sort(key=lambda row: (-row[2].score, row[0], row[2].item.item_id, row[2].item.user_id))
    return [(name, hit) for _, name, hit in tagged[:limit]]
