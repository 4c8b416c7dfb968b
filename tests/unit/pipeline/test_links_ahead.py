"""A new session's recent sessions are read ahead, beside the loading phases, for phase 10's links."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from prefrontal import Stores
from prefrontal.errors import StoreError
from prefrontal.phases.ahead import Ahead, start_ahead
from prefrontal.testing import DelayedStore, FailingStore
from prefrontal.traces.models import PhaseStatus
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio


class SearchWaitsForRecent:
    """A memory store whose ``search`` answers only once ``recent`` is set (when armed)."""

    def __init__(self, store: Any, recent: anyio.Event) -> None:
        self.wrapped = store
        self.recent = recent
        self.armed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def search(self, *args: Any, **kwargs: Any) -> Any:
        if self.armed:
            await self.recent.wait()
        return await self.wrapped.search(*args, **kwargs)


class TellsRecent:
    """A working-memory store that sets ``recent`` when ``recent_sessions`` is called."""

    def __init__(self, store: Any, recent: anyio.Event) -> None:
        self.wrapped = store
        self.recent = recent

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def recent_sessions(self, *args: Any, **kwargs: Any) -> Any:
        self.recent.set()
        return await self.wrapped.recent_sessions(*args, **kwargs)


async def test_recent_sessions_are_read_while_the_memories_load(demo_stores: Stores) -> None:
    """With a search that answers only once recent sessions were read, the new session still links."""
    recent = anyio.Event()
    episodic = SearchWaitsForRecent(demo_stores.episodic, recent)
    telling = TellsRecent(demo_stores.working_memory, recent)
    stores = demo_stores.replace(episodic=episodic, working_memory=telling)
    turns = orchestrator(stores, deadline_ms=2_000)
    await turns.start_turn(demo_request(session_id="morning"))
    recent = anyio.Event()
    episodic.recent = telling.recent = recent
    episodic.armed = True
    result = await turns.start_turn(demo_request(session_id="afternoon"))
    assert result.trace.phase("episodic").status is PhaseStatus.OK
    assert [link.session_id for link in result.working_memory.links] == ["morning"]


@pytest.mark.parametrize("concurrency", ["graph", "sequential"])
async def test_links_are_the_same_read_ahead_or_in_phase_10(
    demo_stores: Stores, concurrency: str
) -> None:
    """Graph mode (read ahead) and sequential mode (read in phase 10) link a new session alike.

    A store that may wait (a wrapper) keeps graph mode from running in order.
    """
    stores = demo_stores.replace(conversation=DelayedStore(demo_stores.conversation, 0))
    turns = orchestrator(stores, concurrency=concurrency)
    await turns.start_turn(demo_request(session_id="morning"))
    result = await turns.start_turn(demo_request(session_id="afternoon"))
    assert result.trace.phase("turn_context").detail["concurrency"] == concurrency
    links = result.working_memory.links
    assert [(k.session_id, k.relationship.value) for k in links] == [("morning", "continuation")]
    assert result.trace.phase("working_memory_init").detail["links"][0]["session_id"] == "morning"


@pytest.mark.parametrize("concurrency", ["graph", "sequential"])
async def test_a_failed_read_of_recent_sessions_fails_phase_10_only(
    demo_stores: Stores, concurrency: str
) -> None:
    """A store failing ``recent_sessions`` fails phase 10 in both modes; the buffer is still saved."""
    failing = FailingStore(demo_stores.working_memory, methods=("recent_sessions",))
    turns = orchestrator(demo_stores.replace(working_memory=failing), concurrency=concurrency)
    first = await turns.start_turn(demo_request(session_id="lonely"))
    assert first.trace.phase("working_memory_init").status is PhaseStatus.FAILED
    assert first.trace.phase("turn_context").status is PhaseStatus.OK
    await turns.wait_background()
    second = await turns.start_turn(demo_request(session_id="lonely"))
    assert second.trace.phase("turn_context").detail["new_session"] is False


async def test_a_read_cut_off_gives_nothing_and_an_error_is_raised_where_used() -> None:
    """``Ahead.result`` is ``None`` for a read its time limit cut, and re-raises a read's error."""

    async def slow() -> int:
        await anyio.sleep(10)
        return 1

    async def broken() -> int:
        raise StoreError("down")

    async with anyio.create_task_group() as tg:
        cut = start_ahead(tg.start_soon, slow, 0.01)
        failed = start_ahead(tg.start_soon, broken, 1.0)
    assert cut is not None and cut.result() is None
    assert failed is not None
    with pytest.raises(StoreError, match="down"):
        failed.result()
    assert start_ahead(None, slow, 1.0) is None
    unfinished: Ahead[int] = Ahead()
    assert unfinished.result() is None
