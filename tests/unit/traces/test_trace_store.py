"""Trace stores: saved, fetched by tenant, listed and filtered, linked to parents.

Run on the in-memory store, and on SQLite when this build has it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from prefrontal import Stores
from prefrontal.stores import sqlite
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceQuery
from prefrontal.traces.models import TurnStatus, TurnTrace
from tests.unit.traces.helpers import T0, run
from tests.unit.traces.helpers import small_trace as trace

TRACES = [
    trace("t1", 0),
    trace("t2", 1, parent_turn_id="t1"),
    trace("t3", 2, parent_turn_id="t2", status=TurnStatus.DEGRADED),
    trace("t4", 3, parent_turn_id="t1", session_id="s2"),
    trace("u1", 4, user_id="ravi"),
]


Backend = Callable[[], Stores]


def _sqlite(tmp_path: Path) -> Backend:
    return lambda: sqlite.open_stores(tmp_path / "traces.db")


@pytest.fixture(params=["memory", "sqlite"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Makes a fresh store set on the backend under test."""
    return Stores.in_memory if request.param == "memory" else _sqlite(tmp_path)


def listing(backend: Backend) -> Callable[[TraceQuery], list[str]]:
    """Lists the ids of the ``TRACES`` that match a query, on a store holding them."""

    def listed(query: TraceQuery) -> list[str]:
        async def go() -> list[str]:
            stores = backend()
            try:
                for t in TRACES:
                    await stores.traces.put(t)
                return [t.turn_id for t in await stores.traces.list(query)]
            finally:
                await stores.aclose()

        return run(go)

    return listed


def test_list_is_newest_first_and_limited(backend: Backend) -> None:
    """Listing returns the newest traces first, at most ``limit``."""
    listed = listing(backend)
    assert listed(TraceQuery()) == ["u1", "t4", "t3", "t2", "t1"]
    assert listed(TraceQuery(limit=2)) == ["u1", "t4"]


def test_list_filters_by_owner_session_status_and_time(backend: Backend) -> None:
    """Each filter narrows the list; filters combine."""
    listed = listing(backend)
    assert listed(TraceQuery(user_id="ravi")) == ["u1"]
    assert listed(TraceQuery(session_id="s2")) == ["t4"]
    assert listed(TraceQuery(status=TurnStatus.DEGRADED)) == ["t3"]
    window = TraceQuery(since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=3))
    assert listed(window) == ["t3", "t2"]
    assert listed(TraceQuery(agent_id="atlas", user_id="maya", session_id="s1")) == [
        "t3",
        "t2",
        "t1",
    ]


def test_turns_link_to_their_parent(backend: Backend) -> None:
    """``parent_turn_id`` lists the turns that followed a turn; ``turn_id`` finds one."""
    listed = listing(backend)
    assert listed(TraceQuery(parent_turn_id="t1")) == ["t4", "t2"]
    assert listed(TraceQuery(turn_id="t3")) == ["t3"]


def test_get_is_private_to_the_tenant(backend: Backend) -> None:
    """``get`` returns a trace only to its own agent and user."""

    async def go() -> tuple[TurnTrace | None, TurnTrace | None]:
        stores = backend()
        try:
            await stores.traces.put(TRACES[0])
            mine = await stores.traces.get(Tenant(agent_id="atlas", user_id="maya"), "t1")
            theirs = await stores.traces.get(Tenant(agent_id="atlas", user_id="ravi"), "t1")
            return mine, theirs
        finally:
            await stores.aclose()

    mine, theirs = run(go)
    assert mine == TRACES[0]
    assert theirs is None
