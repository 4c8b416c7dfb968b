"""Graph and sequential modes give the same turn, whatever order the stores answer in."""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal import ContextBundle, Stores
from prefrontal.demo import seed
from prefrontal.phases import PHASES
from prefrontal.stores.long_term import MemoryQuery
from prefrontal.testing import DelayedStore
from tests.conftest import demo_request, orchestrator

BUDGET_MS: dict[str, float] = {p.name: p.budget_ms for p in PHASES}
READERS = {
    "consciousness": "consciousness",
    "frontal_cortex": "frontal_cortex",
    "conversation": "conversation",
    "episodic": "episodic",
    "semantic": "semantic",
    "scratch_page": "scratch_page",
    "working_memory": "turn_context",
}
"""Each store the turn reads, and the phase whose time budget its delay stays within."""
SHARE = 0.25
"""Delays are drawn up to this share of the phase's budget, to keep the test fast."""


class Recording:
    """A memory store that notes the text of every search."""

    def __init__(self, store: Any, queries: list[str]) -> None:
        self.wrapped = store
        self.queries = queries

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def search(self, tenant: Any, query: MemoryQuery) -> Any:
        self.queries.append(query.text)
        return await self.wrapped.search(tenant, query)


async def one_turn(
    concurrency: str, delays: dict[str, float]
) -> tuple[ContextBundle, dict[str, list[str]]]:
    stores = Stores.in_memory()
    await seed(stores)
    queries: dict[str, list[str]] = {"episodic": [], "semantic": []}
    slow = {kind: DelayedStore(getattr(stores, kind), seconds) for kind, seconds in delays.items()}
    for kind, found in queries.items():
        slow[kind] = DelayedStore(Recording(getattr(stores, kind), found), delays[kind])
    config: dict[str, object] = {"concurrency": concurrency, "deadline_ms": 30_000}
    result = await orchestrator(stores.replace(**slow), **config).start_turn(demo_request())
    return result.bundle, {kind: sorted(texts) for kind, texts in queries.items()}


def delay(kind: str) -> st.SearchStrategy[float]:
    top = BUDGET_MS[READERS[kind]] * SHARE / 1_000
    return st.floats(min_value=0.0, max_value=top)


@settings(max_examples=5, deadline=None)
@given(delays=st.fixed_dictionaries({kind: delay(kind) for kind in READERS}))
def test_graph_mode_gives_the_bundle_and_queries_of_sequential_mode(
    delays: dict[str, float],
) -> None:
    """Stores answering at random times within their budgets change neither bundle nor queries."""
    graph_bundle, graph_queries = anyio.run(one_turn, "graph", delays)
    sequential_bundle, sequential_queries = anyio.run(one_turn, "sequential", delays)
    assert graph_queries == sequential_queries
    assert graph_queries["episodic"] and graph_queries["semantic"]
    assert graph_bundle.checksum == sequential_bundle.checksum
    assert graph_bundle == sequential_bundle
