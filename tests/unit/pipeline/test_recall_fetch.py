"""The recall gate fetches the held memory items only when it reuses them, after its probe.

The store is wrapped, so the turn's store calls may overlap (``TurnState.overlap``):
the case in which a fetch begun ahead of the decision would have been possible.
"""

from __future__ import annotations

from typing import Any

import pytest

from prefrontal import Stores
from prefrontal.traces.models import PhaseStatus
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio


class Recorded:
    """A memory store that records its ``search`` and ``get`` calls, in order."""

    def __init__(self, store: Any) -> None:
        self.wrapped = store
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def get(self, tenant: Any, item_ids: list[str]) -> Any:
        self.calls.append(("get", tuple(item_ids)))
        return await self.wrapped.get(tenant, item_ids)

    async def search(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(("search", ()))
        return await self.wrapped.search(*args, **kwargs)


async def test_a_reusing_turn_fetches_the_held_items_once_after_its_probe(
    demo_stores: Stores,
) -> None:
    """The continuing turn probes, then fetches exactly what the gate reuses, once."""
    episodic = Recorded(demo_stores.episodic)
    turns = orchestrator(demo_stores.replace(episodic=episodic), deadline_ms=2_000)
    await turns.start_turn(demo_request())
    episodic.calls.clear()
    second = await turns.start_turn(demo_request())
    record = second.trace.phase("episodic")
    assert record.status is PhaseStatus.OK
    assert record.detail["recall"] == "reuse"
    assert record.items_loaded > 0
    assert [kind for kind, _ in episodic.calls] == ["search", "get"]
    fetched = episodic.calls[1][1]
    assert fetched == tuple(sorted(fetched)) and len(set(fetched)) == len(fetched)


async def test_a_searching_turn_fetches_no_held_item_by_id(demo_stores: Stores) -> None:
    """When the topic changes, the gate's turn searches and fetches nothing it does not use."""
    episodic = Recorded(demo_stores.episodic)
    turns = orchestrator(demo_stores.replace(episodic=episodic), deadline_ms=2_000)
    await turns.start_turn(demo_request())
    episodic.calls.clear()
    second = await turns.start_turn(
        demo_request(user_input="Which harbour ferries leave Lisbon after midnight?")
    )
    record = second.trace.phase("episodic")
    assert record.status is PhaseStatus.OK
    assert record.detail["recall"] != "reuse"
    assert episodic.calls and all(kind == "search" for kind, _ in episodic.calls)
