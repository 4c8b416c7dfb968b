"""The buffer survives a restart: saved to an SQLite file, reopened by a new process's stores."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from prefrontal import Stores
from prefrontal.buffer import Focus, ItemProvenance, ItemSource, NewItem, SessionBuffer
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.phases import PHASE_NAMES
from prefrontal.stores import MemoryQuery, SessionKey, Tenant, sqlite
from tests.conftest import FIXED_NOW, demo_request, orchestrator

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id="agent", user_id="ada", session_id="s-1")


@pytest.fixture
def open_stores(tmp_path: Path) -> Callable[[], Stores]:
    return lambda: sqlite.open_stores(tmp_path / "prefrontal.db")


async def test_a_saved_buffer_loads_back_after_a_restart(open_stores: Callable[[], Stores]) -> None:
    """Save, close every store, reopen the file: the same buffer, version and counters."""
    stores = open_stores()
    session = await SessionBuffer.load(stores.working_memory, KEY)
    await session.add(NewItem(content="Tool: flights cost 420 EUR.", source=ItemSource.EXTERNAL))
    await session.refresh_turn(
        [NewItem(content="Ada plans a Lisbon trip in May.", tags=("trip",))],
        focus=Focus(input_text="Lisbon trip"),
    )
    await session.save()
    await stores.aclose()

    reopened = open_stores()
    again = await SessionBuffer.load(reopened.working_memory, KEY)
    assert again.snapshot() == session.snapshot()
    assert again.version == 1
    other = await SessionBuffer.load(
        reopened.working_memory, KEY.model_copy(update={"user_id": "bob"})
    )
    assert other.is_new
    await reopened.aclose()


async def test_turns_carry_on_across_a_restart(open_stores: Callable[[], Stores]) -> None:
    """A turn after a restart finds the session's buffer and may reuse it."""
    # Entered, the first turn's writes are drained before the stores close (run in
    # start_turn they could be cut at the deadline); roomy budgets, so that a loaded
    # machine cuts no phase short (a cut phase carries no recall decision).
    roomy = {"deadline_ms": 10_000, "phase_budgets_ms": dict.fromkeys(PHASE_NAMES, 5_000)}
    stores = open_stores()
    await seed(stores)
    async with orchestrator(stores, **roomy) as turns:
        first = await turns.start_turn(demo_request())

    reopened = open_stores()
    second = await orchestrator(reopened, **roomy).start_turn(demo_request())
    phases = {p.name: p for p in second.trace.phases}
    assert phases["turn_context"].detail["new_session"] is False
    assert phases["episodic"].detail["recall"] == "reuse"
    assert {i.item_id for i in second.working_memory.items} == {
        i.item_id for i in first.working_memory.items
    }
    await reopened.aclose()


async def test_the_probe_changes_nothing_in_sqlite(open_stores: Callable[[], Stores]) -> None:
    """On SQLite too, the recall gate's probe leaves every item as it found it."""
    stores = open_stores()
    await seed(stores)
    tenant = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
    key = SessionKey(agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id="probe")
    session = await SessionBuffer.load(stores.working_memory, key)
    hits = await stores.episodic.search(tenant, _query("payment provider review"))
    ids = [h.item.item_id for h in hits]
    fragments = [
        NewItem(
            content=h.item.content,
            source=ItemSource.MEMORY_RETRIEVAL,
            provenance=ItemProvenance(store="episodic", item_ids=(h.item.item_id,)),
        )
        for h in hits
    ]
    await session.refresh_turn(fragments, focus=Focus(input_text="payment provider review"))
    before = await stores.episodic.get(tenant, ids)
    decision = await session.recall_gate(stores.episodic, "episodic", "payment provider review")
    assert decision.probe_ids
    assert await stores.episodic.get(tenant, ids) == before
    await stores.aclose()


def _query(text: str) -> MemoryQuery:
    return MemoryQuery(text=text, limit=5, now=FIXED_NOW)
