"""The recall gate's probe and the fetch of the held items run at once: one round trip, not two."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from prefrontal import Stores
from prefrontal.traces.models import PhaseStatus
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio


class ProbeWaitsForFetch:
    """A memory store whose ``search`` answers only once a ``get`` has started (after the first)."""

    def __init__(self, store: Any) -> None:
        self.wrapped = store
        self.fetching = anyio.Event()
        self.armed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        self.fetching.set()
        return await self.wrapped.get(*args, **kwargs)

    async def search(self, *args: Any, **kwargs: Any) -> Any:
        if self.armed:
            await self.fetching.wait()
        return await self.wrapped.search(*args, **kwargs)


async def test_a_reusing_turn_fetches_while_it_probes(demo_stores: Stores) -> None:
    """With a probe that answers only once the fetch began, the continuing turn still reuses."""
    episodic = ProbeWaitsForFetch(demo_stores.episodic)
    turns = orchestrator(demo_stores.replace(episodic=episodic), deadline_ms=2_000)
    await turns.start_turn(demo_request())
    episodic.armed = True
    second = await turns.start_turn(demo_request())
    record = second.trace.phase("episodic")
    assert record.status is PhaseStatus.OK
    assert record.detail["recall"] == "reuse"
    assert record.items_loaded > 0
