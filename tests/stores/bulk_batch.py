"""The batch the set-wise ``put_many`` tests of every backend write, and how they compare it.

Items of two agents and four users (one whose id's hex is not its ASCII),
their words drawn from a small vocabulary so that terms are held once, twice
and three times or more; some shared, some facts, some expired, some with
vectors. :func:`stored` is written first, :func:`batch` then replaces some of
it and mixes runs of new items with replacements, duplicates and
supersessions; :func:`written` writes the batch set-wise or item by item and
:func:`searched` gives every tenant's results for a fixed set of queries.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from prefrontal.stores.long_term import MemoryItem, MemoryKind, MemoryQuery, MemoryStore
from prefrontal.stores.sqlite.bulk import AT_LEAST
from prefrontal.stores.tenancy import Scope, Tenant

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=30)
TENANTS = (
    Tenant(agent_id="atlas", user_id="alice"),
    Tenant(agent_id="atlas", user_id="bob"),
    Tenant(agent_id="orion", user_id="alice"),
    Tenant(agent_id="orion", user_id="çarol"),  # an id whose hex is not its ASCII
)
WORDS = [
    "invoice",
    "payment",
    "launch",
    "review",
    "vendor",
    "contract",
    "budget",
    "hiring",
    "plan",
    "porto",
    "lisbon",
    "deadline",
    "release",
    "notes",
    "urgent",
    "late",
    "praised",
    "mentioned",
    "quarterly",
    "forecast",
    "audit",
]


def item(rng: random.Random, n: int, tenant: Tenant, **fields: Any) -> MemoryItem:
    """Item ``m{n}`` of ``tenant``, its words and other fields drawn from ``rng``."""
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
    if rng.random() < 0.3:
        words += [words[0]] * rng.randint(1, 3)  # a term held twice, three or four times
    return MemoryItem(
        item_id=f"m{n}",
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        scope=Scope.SHARED if rng.random() < 0.2 else Scope.PRIVATE,
        kind=MemoryKind.EVENT if rng.random() < 0.7 else MemoryKind.FACT,
        content=" ".join(words) + f" {tenant.user_id}onlyword",
        importance=round(rng.random(), 2),
        created_at=T0 + timedelta(minutes=n),
        valid_until=T0 + timedelta(days=1) if rng.random() < 0.1 else None,
        thread_id=f"t{n // 10}",
        position=n % 10,
        tags=("billing",) if rng.random() < 0.2 else (),
        embedding=(rng.random(), rng.random(), 1.0) if rng.random() < 0.5 else None,
        **fields,
    )


def one_run(seed: int, count: int = 2 * AT_LEAST) -> list[MemoryItem]:
    """``count`` new items of the first tenant: one set-wise run (at least ``AT_LEAST``)."""
    rng = random.Random(seed)
    return [item(rng, n, TENANTS[0]) for n in range(count)]


def _owner(written: MemoryItem) -> Tenant:
    return Tenant(agent_id=written.agent_id, user_id=written.user_id)


def stored(rng: random.Random) -> list[MemoryItem]:
    """Items written before the batch (the batch replaces some of them)."""
    return [item(rng, n, TENANTS[n % 2]) for n in range(10)]


def batch(rng: random.Random) -> list[MemoryItem]:
    """New items in runs, with replacements, duplicates and supersessions between them."""
    items = [item(rng, n, rng.choice(TENANTS)) for n in range(100, 100 + 2 * AT_LEAST)]
    items.append(item(rng, 3, TENANTS[1]))  # replaces a stored item
    items.append(item(rng, 105, _owner(items[5])))  # replaces one earlier in the batch
    items.append(item(rng, 400, _owner(items[1]), supersedes="m101"))
    items += [item(rng, n, rng.choice(TENANTS)) for n in range(500, 500 + AT_LEAST)]
    items.append(item(rng, 900, TENANTS[2], supersedes="m960"))  # a later item: no effect
    items += [item(rng, n, TENANTS[2]) for n in range(950, 950 + AT_LEAST)]
    items += [item(rng, n, TENANTS[3]) for n in range(2000, 2005)]  # a short run
    return items


async def written(
    store: MemoryStore, before: list[MemoryItem], items: list[MemoryItem], *, bulk: bool
) -> None:
    """``before`` by ``put_many``, then ``items`` by ``put_many`` (``bulk``) or one by one."""
    await store.put_many(before)
    if bulk:
        await store.put_many(items)
    else:
        for one in items:
            await store.put(one)


async def searched(store: MemoryStore) -> list[list[tuple[str, str, float]]]:
    """Every tenant's hits (id, user, score to 9 places) for four texts, with and without a
    vector."""
    found = []
    for tenant in TENANTS:
        for text in ("invoice payment", "launch review urgent", "alice onlyword", "plan"):
            for embedding in (None, (0.2, 0.9, 1.0)):
                query = MemoryQuery(text=text, limit=10, embedding=embedding, now=NOW)
                hits = await store.search(tenant, query)
                found.append([(h.item.item_id, h.item.user_id, round(h.score, 9)) for h in hits])
    return found
