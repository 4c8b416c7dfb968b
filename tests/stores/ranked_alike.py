"""Random queries that a durable store must rank as the in-memory store does, to the bit."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime

from prefrontal.stores.long_term import MemoryQuery, MemoryStore
from prefrontal.stores.tenancy import Tenant


def random_queries(
    rng: random.Random, words: Sequence[str], limits: Sequence[int], count: int, now: datetime
) -> list[MemoryQuery]:
    """``count`` queries of one to five of ``words``, each at one of ``limits``."""
    return [
        MemoryQuery(
            text=" ".join(rng.choices(words, k=rng.randint(1, 5))),
            limit=rng.choice(list(limits)),
            now=now,
        )
        for _ in range(count)
    ]


async def assert_ranked_alike(
    expected: MemoryStore, stored: MemoryStore, tenant: Tenant, queries: Sequence[MemoryQuery]
) -> None:
    """Each of ``queries`` gets the same hits, order and scores from both stores."""
    for query in queries:
        want = await expected.search(tenant, query)
        got = await stored.search(tenant, query)
        assert [(h.item.item_id, h.score) for h in got] == [
            (h.item.item_id, h.score) for h in want
        ], (query.text, query.limit)
