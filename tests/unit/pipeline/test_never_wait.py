"""Over stores none of whose calls can wait, graph mode runs its phases in order, in one task."""

from __future__ import annotations

import pytest

from prefrontal import Stores
from prefrontal.demo import seed
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores.memory import InMemoryConversationStore
from prefrontal.stores.memory.waiting import never_wait, reference
from prefrontal.testing import DelayedStore
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio


class RecordingConversations(InMemoryConversationStore):
    """A subclass of a reference store: it could wait in any method it overrides."""


def test_only_the_reference_set_without_an_embedder_never_waits() -> None:
    """A wrapper, a subclass or an embedder (whose calls may wait) each make the set one that may."""
    stores = Stores.in_memory()
    assert stores.never_wait()
    assert not stores.replace(conversation=DelayedStore(stores.conversation, 0)).never_wait()
    assert not stores.replace(conversation=RecordingConversations()).never_wait()
    assert not Stores.in_memory(embedder=HashingEmbedder()).never_wait()
    assert reference(stores.traces) and not reference(DelayedStore(stores.traces, 0))
    assert never_wait([]) and not never_wait([object()])


@pytest.mark.parametrize(
    ("waits", "ran"), [(False, "sequential"), (True, "graph")], ids=["never-waits", "may-wait"]
)
async def test_graph_mode_runs_in_order_only_where_nothing_could_overlap(
    demo_stores: Stores, waits: bool, ran: str
) -> None:
    """Phase 1's detail says how the loading phases ran; the bundle is the same either way."""
    stores = demo_stores
    if waits:
        stores = stores.replace(conversation=DelayedStore(stores.conversation, 0))
    result = await orchestrator(stores, concurrency="graph").start_turn(demo_request())
    assert result.trace.phase("turn_context").detail["concurrency"] == ran
    fresh = Stores.in_memory()
    await seed(fresh)
    alone = await orchestrator(fresh, concurrency="sequential").start_turn(demo_request())
    assert alone.trace.phase("turn_context").detail["concurrency"] == "sequential"
    assert result.bundle.checksum == alone.bundle.checksum


async def test_a_reused_recall_is_the_same_whether_its_items_are_fetched_ahead_or_not() -> None:
    """Over stores that may wait the held items are fetched while the gate probes; over stores
    that never wait they are fetched only on reuse. Each turn of a session gives the same bundle
    and the same recall decisions either way."""
    runs: list[list[tuple[str, object, object]]] = []
    for waits in (False, True):
        stores = Stores.in_memory()
        await seed(stores)
        if waits:
            stores = stores.replace(episodic=DelayedStore(stores.episodic, 0))
        turns = orchestrator(stores)
        seen = []
        for _ in range(3):
            result = await turns.start_turn(demo_request())
            await turns.wait_background()
            recall = result.trace.phase("episodic").detail
            seen.append((result.bundle.checksum, recall["recall"], recall["recall_reason"]))
        runs.append(seen)
    never_waits, may_wait = runs
    assert never_waits == may_wait
    assert [mode for _, mode, _ in never_waits][1:] == ["reuse", "reuse"]
