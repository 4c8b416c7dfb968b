"""Erase and forget: expected cancellations logged at info, and who owns a curator's note.

An erase stops the writes still in flight behind its user's turns: that is
asked for, so it is logged at info (``turn_write_stopped_by_erase``), never
as an error. A shared memory belongs to the user it is filed under,
whoever wrote it (its ``author``, a curator's key say): erasing that user
removes it, and so does that user's forget; another user forgets it only
with the right to change shared memory (``shared=True``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from structlog.testing import capture_logs

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.stores import MemoryQuery, Tenant
from prefrontal.stores.tenancy import Scope
from prefrontal.testing import DelayedStore

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
AGENT = "atlas"
SAM = Tenant(agent_id=AGENT, user_id="sam")
MAYA = Tenant(agent_id=AGENT, user_id="maya")


async def test_writes_an_erase_stops_are_logged_at_info() -> None:
    """Turn writes in flight when their user is erased are logged at info, not as errors."""
    base = Stores.in_memory()
    slow = base.replace(traces=DelayedStore(base.traces, 0.05))
    async with Orchestrator(slow, clock=lambda: T0) as orchestrator:
        with capture_logs() as logs:
            request = TurnRequest(agent_id=AGENT, user_id="u0", session_id="s1", user_input="hi")
            await orchestrator.start_turn(request)
            report = await orchestrator.memory.erase(AGENT, "u0")
            await orchestrator.wait_background()
    assert report.cancelled == {"turn_writes": 1}
    stopped = [e for e in logs if e["event"] == "turn_write_stopped_by_erase"]
    assert stopped and all(e["log_level"] == "info" for e in stopped)
    assert [e for e in logs if e["log_level"] == "error"] == []


async def curator_note(orchestrator: Orchestrator) -> str:
    """A shared memory a curator's key wrote under sam's id; its id."""
    item = await orchestrator.memory.remember(
        SAM, "Curated: the office closes at six", scope=Scope.SHARED, author="curator"
    )
    return item.item_id


async def seen_by(stores: Stores, tenant: Tenant) -> int:
    query = MemoryQuery(text="office closes", limit=10, now=T0)
    return len(await stores.semantic.search(tenant, query))


async def test_a_curators_note_filed_under_a_user_goes_with_that_users_erase_and_forget() -> None:
    """Erase of sam and sam's own forget both remove a note a curator filed under sam; maya
    removes it only with the right to change shared memory."""
    stores = Stores.in_memory()
    async with Orchestrator(stores, clock=lambda: T0) as orchestrator:
        note = await curator_note(orchestrator)
        assert await seen_by(stores, MAYA) == 1
        assert not await orchestrator.memory.forget(MAYA, note)
        assert await seen_by(stores, MAYA) == 1
        assert await orchestrator.memory.forget(SAM, note)
        assert await seen_by(stores, MAYA) == 0
        await curator_note(orchestrator)
        report = await orchestrator.memory.erase(AGENT, "sam")
        assert report.removed["semantic"] == 1
        assert await seen_by(stores, MAYA) == 0
        again = await curator_note(orchestrator)
        assert await orchestrator.memory.forget(MAYA, again, shared=True)
        assert await seen_by(stores, SAM) == 0
