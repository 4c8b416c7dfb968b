"""The in-memory store's vector matrix answers as scoring every visible live item would."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from prefrontal.stores import MemoryItem, MemoryQuery, Tenant
from prefrontal.stores.memory.memory import InMemoryMemoryStore
from prefrontal.stores.tenancy import Scope
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent", user_id="alice")


def item(item_id: str, vector: tuple[float, ...], **fields: object) -> MemoryItem:
    return MemoryItem.model_validate(
        {
            "item_id": item_id,
            "agent_id": "agent",
            "user_id": "alice",
            "content": f"note {item_id}",
            "created_at": FIXED_NOW,
            "embedding": vector,
            **fields,
        }
    )


async def cosines(store: InMemoryMemoryStore, tenant: Tenant = ALICE) -> dict[str, float]:
    query = MemoryQuery(text="note", embedding=(1.0, 0.0, 0.0), now=FIXED_NOW)
    found = await store.vector_matches(tenant, query, (1.0, 0.0, 0.0))
    return {key.split("\x1f")[1]: round(value, 9) for key, value in found.items()}


async def test_only_live_visible_items_of_the_size_are_scored() -> None:
    store = InMemoryMemoryStore()
    await store.put_many(
        [
            item("own", (3.0, 4.0, 0.0)),
            item("shared", (0.0, 1.0, 0.0), user_id="bob", scope=Scope.SHARED),
            item("private", (1.0, 0.0, 0.0), user_id="bob"),
            item("expired", (1.0, 0.0, 0.0), valid_until=FIXED_NOW - timedelta(seconds=1)),
            item("other-agent", (1.0, 0.0, 0.0), agent_id="other"),
            item("other-size", (1.0, 0.0)),
        ]
    )
    assert await cosines(store) == {"own": 0.6, "shared": 0.0}
    assert await cosines(store, Tenant(agent_id="agent", user_id="bob")) == {
        "shared": 0.0,
        "private": 1.0,
    }


async def test_writes_supersession_and_deletion_are_followed() -> None:
    store = InMemoryMemoryStore()
    await store.put_many([item(f"m{n}", (1.0, float(n), 0.0)) for n in range(3)])
    await store.put(item("m1", (0.0, 1.0, 0.0)))  # replaced: its new vector
    await store.put(item("m3", (1.0, 0.0, 0.0), supersedes="m0"))
    assert await store.delete(ALICE, ["m2"]) == 1
    await store.put(item("m4", (2.0, 0.0, 0.0)))  # takes the freed slot
    await store.put(item("m5", (1.0, 1.0, 1.0), embedding=None))  # no vector: not scored
    assert await cosines(store) == {"m1": 0.0, "m3": 1.0, "m4": 1.0}


async def test_many_rows_match_a_float64_pass() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(3_000, 3))
    store = InMemoryMemoryStore()
    await store.put_many([item(f"m{n}", tuple(v)) for n, v in enumerate(vectors.tolist())])
    expected = vectors[:, 0] / np.linalg.norm(vectors, axis=1)
    found = await cosines(store)
    assert found == {f"m{n}": round(float(v), 9) for n, v in enumerate(expected)}
