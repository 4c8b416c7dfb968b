"""Conformance of the working-memory and trace stores."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from prefrontal.errors import ConflictError, ItemRejectedError
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceQuery, TraceStore
from prefrontal.stores.working_memory import SessionKey, SessionState, WorkingMemoryStore
from prefrontal.testing.conformance.base import ALICE, BOB, STRANGER, StoreSuite, at
from prefrontal.testing.conformance.ownership import TraceOwnership, WorkingMemoryOwnership
from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnStatus, TurnTrace


def key(session_id: str = "s1", tenant: Tenant = ALICE) -> SessionKey:
    """The key of ``tenant``'s session."""
    return SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id=session_id)


def fresh(session: SessionKey, **state: Any) -> SessionState:
    """A never-saved state holding ``state``."""
    return SessionState(key=session, state=state, themes=("travel",), entities=("Lisbon",))


class WorkingMemoryStoreSuite(WorkingMemoryOwnership, StoreSuite):
    """Every contract of :class:`~prefrontal.stores.WorkingMemoryStore`."""

    async def test_unknown_session_loads_none(self, store: WorkingMemoryStore) -> None:
        """``load`` of a session never saved is ``None``."""
        assert await store.load(key()) is None

    async def test_save_assigns_the_next_version_and_round_trips(
        self, store: WorkingMemoryStore
    ) -> None:
        """The first save returns version 1, and ``load`` returns what was saved."""
        saved = await store.save(fresh(key(), items=[{"id": "a", "tokens": 12}], note="é 東"))
        assert saved.version == 1
        assert await store.load(key()) == saved

    async def test_save_from_the_loaded_version_succeeds(self, store: WorkingMemoryStore) -> None:
        """Saving the state last loaded moves the version on by one."""
        first = await store.save(fresh(key(), n=1))
        second = await store.save(first.model_copy(update={"state": {"n": 2}}))
        assert second.version == 2
        loaded = await store.load(key())
        assert loaded is not None
        assert loaded.state == {"n": 2}

    async def test_stale_save_conflicts_and_changes_nothing(
        self, store: WorkingMemoryStore
    ) -> None:
        """A save from an outdated version raises ConflictError and keeps the stored state."""
        first = await store.save(fresh(key(), n=1))
        await store.save(first.model_copy(update={"state": {"n": 2}}))
        with pytest.raises(ConflictError):
            await store.save(first.model_copy(update={"state": {"lost": True}}))
        with pytest.raises(ConflictError):
            await store.save(fresh(key(), n=0))
        loaded = await store.load(key())
        assert loaded is not None
        assert (loaded.version, loaded.state) == (2, {"n": 2})

    async def test_concurrent_saves_never_lose_an_update(self, store: WorkingMemoryStore) -> None:
        """Of many saves racing from the same version exactly one wins; the rest conflict."""
        base = await store.save(fresh(key(), n=0))
        outcomes: list[str] = []

        async def attempt(n: int) -> None:
            try:
                await store.save(base.model_copy(update={"state": {"n": n}}))
                outcomes.append("saved")
            except ConflictError:
                outcomes.append("conflict")

        async with anyio.create_task_group() as group:
            for n in range(8):
                group.start_soon(attempt, n)
        assert sorted(outcomes) == ["conflict"] * 7 + ["saved"]
        loaded = await store.load(key())
        assert loaded is not None
        assert loaded.version == 2

    async def test_keys_are_exact(self, store: WorkingMemoryStore) -> None:
        """A session is loaded only by its own agent, user and session id."""
        await store.save(fresh(key("s1"), n=1))
        assert await store.load(key("s2")) is None
        assert await store.load(key("s1", BOB)) is None
        assert await store.load(key("s1", STRANGER)) is None

    async def test_sessions_by_agent_user_and_text(self, store: WorkingMemoryStore) -> None:
        """``sessions`` lists the agent's sessions (one user's when asked) holding a text."""
        await store.save(fresh(key("a"), items=["id-1"]))
        await store.save(fresh(key("b"), items=["id-2"]))
        await store.save(fresh(key("c", BOB), items=["id-1"]))
        await store.save(fresh(key("d", STRANGER), items=["id-1"]))

        def ids(keys: list[SessionKey]) -> list[tuple[str, str]]:
            return sorted((k.user_id, k.session_id) for k in keys)

        everyone = await store.sessions("agent-1")
        assert ids(everyone) == [("alice", "a"), ("alice", "b"), ("bob", "c")]
        holding = await store.sessions("agent-1", containing=['"id-1"'])
        assert ids(holding) == [("alice", "a"), ("bob", "c")]
        mine = await store.sessions("agent-1", user_id="alice", containing=['"id-1"', '"id-2"'])
        assert ids(mine) == [("alice", "a"), ("alice", "b")]
        assert await store.sessions("agent-1", containing=['"id-3"']) == []

    async def test_recent_sessions_newest_first_within_tenant(
        self, store: WorkingMemoryStore
    ) -> None:
        """``recent_sessions`` lists the tenant's sessions saved since ``since``, newest first."""
        for name in ("a", "b", "c"):
            await store.save(fresh(key(name)))
            await anyio.sleep(0.002)
        await store.save(fresh(key("bobs", BOB)))
        sessions = await store.recent_sessions(ALICE, since=at(-60 * 24 * 365), limit=10)
        assert [s.key.session_id for s in sessions] == ["c", "b", "a"]
        limited = await store.recent_sessions(ALICE, since=at(-60 * 24 * 365), limit=2)
        assert [s.key.session_id for s in limited] == ["c", "b"]
        assert await store.recent_sessions(ALICE, since=sessions[0].updated_at, limit=10) == [
            sessions[0]
        ]
        assert await store.recent_sessions(STRANGER, since=at(-1e6), limit=10) == []

    async def test_recent_sessions_follow_each_save(self, store: WorkingMemoryStore) -> None:
        """A session saved again is listed once, at its new ``updated_at``; ties by session id.

        Saves out of the order of their ``updated_at`` are listed by it, the
        session id (descending) breaking ties, and the session the store was
        left holding is the state listed.
        """

        def as_of(session: str, minutes: float, version: int = 0) -> SessionState:
            moment = {"started_at": at(-60), "updated_at": at(minutes), "version": version}
            return fresh(key(session)).model_copy(update=moment)

        await store.save(as_of("a", -3))
        await store.save(as_of("c", -1))
        await store.save(as_of("b", -1))
        await store.save(as_of("d", -5))
        again = await store.save(as_of("a", -1, version=1))
        recent = await store.recent_sessions(ALICE, since=at(-60), limit=10)
        assert [(s.key.session_id, s.updated_at) for s in recent] == [
            ("c", at(-1)),
            ("b", at(-1)),
            ("a", at(-1)),
            ("d", at(-5)),
        ]
        assert recent[2] == again
        moved_back = await store.save(as_of("c", -4, version=1))
        recent = await store.recent_sessions(ALICE, since=at(-4), limit=10)
        assert [s.key.session_id for s in recent] == ["b", "a", "c"]
        assert recent[2] == moved_back

    async def test_updated_at_is_the_callers(self, store: WorkingMemoryStore) -> None:
        """A state saved as of a given moment is recent from then on, by that same clock."""
        saved = await store.save(fresh(key("s1")).model_copy(update={"updated_at": at(-5)}))
        assert saved.updated_at == at(-5)
        assert await store.recent_sessions(ALICE, since=at(-6), limit=10) == [saved]
        assert await store.recent_sessions(ALICE, since=at(-4), limit=10) == []
        assert await store.load(key("s1")) == saved

    @pytest.mark.parametrize("limit", [0, -1])
    async def test_recent_sessions_without_room_is_empty(
        self, store: WorkingMemoryStore, limit: int
    ) -> None:
        """A limit of zero or less returns no sessions."""
        await store.save(fresh(key("s1")))
        await store.save(fresh(key("s2")))
        assert await store.recent_sessions(ALICE, since=at(-1e6), limit=limit) == []

    async def test_large_state_round_trips(self, store: WorkingMemoryStore) -> None:
        """A 10 MB buffer state is saved and loaded whole."""
        saved = await store.save(fresh(key(), blob="x" * 10_000_000))
        loaded = await store.load(key())
        assert loaded == saved

    async def test_state_that_cannot_be_encoded_is_refused_or_kept(
        self, store: WorkingMemoryStore
    ) -> None:
        """A state holding a lone surrogate is refused with ItemRejectedError or kept exactly."""
        try:
            saved = await store.save(fresh(key(), text="bad \ud800"))
        except ItemRejectedError:
            assert await store.load(key()) is None
        else:
            assert await store.load(key()) == saved


def trace(turn_id: str, tenant: Tenant = ALICE, **fields: Any) -> TurnTrace:
    """A sealed trace of one ok turn in session ``s1`` at ``T0``."""
    fields.setdefault("session_id", "s1")
    fields.setdefault("started_at", at(0))
    fields.setdefault("status", TurnStatus.OK)
    phase = PhaseRecord(
        name="turn_context",
        index=1,
        status=PhaseStatus.OK,
        started_ms=0.0,
        duration_ms=0.4,
        budget_ms=50.0,
        detail={"ids": ["a", "b"], "nested": {"x": 1.5}},
    )
    return TurnTrace(
        turn_id=turn_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        duration_ms=12.5,
        deadline_ms=1000.0,
        total_budget=4000,
        total_tokens=1234,
        checksum="abc123",
        ready_for_router=True,
        phases=(phase,),
        **fields,
    )


async def listed(store: TraceStore, **fields: Any) -> list[str]:
    """The turn ids ``list`` returns."""
    return [t.turn_id for t in await store.list(TraceQuery(**fields))]


class TraceStoreSuite(TraceOwnership, StoreSuite):
    """Every contract of :class:`~prefrontal.stores.TraceStore`."""

    async def test_trace_round_trips_for_its_owner(self, store: TraceStore) -> None:
        """``get`` returns the trace put, equal, to the tenant it belongs to."""
        await store.put(trace("t1"))
        assert await store.get(ALICE, "t1") == trace("t1")

    async def test_traces_are_private_to_their_user(self, store: TraceStore) -> None:
        """Another user or agent gets ``None`` for the trace, as for an unknown id."""
        await store.put(trace("t1"))
        assert await store.get(BOB, "t1") is None
        assert await store.get(STRANGER, "t1") is None
        assert await store.get(ALICE, "missing") is None
        assert await store.get(ALICE, "") is None

    async def test_put_replaces_a_trace(self, store: TraceStore) -> None:
        """A trace put again under the same turn id replaces the first."""
        await store.put(trace("t1"))
        await store.put(trace("t1", status=TurnStatus.DEGRADED))
        got = await store.get(ALICE, "t1")
        assert got is not None
        assert got.status is TurnStatus.DEGRADED

    async def test_list_newest_first_and_limited(self, store: TraceStore) -> None:
        """``list`` returns traces newest ``started_at`` first, at most ``limit``."""
        for i in (2, 0, 1):
            await store.put(trace(f"t{i}", started_at=at(i)))
        assert await listed(store) == ["t2", "t1", "t0"]
        assert await listed(store, limit=1) == ["t2"]

    async def test_list_filters(self, store: TraceStore) -> None:
        """Every filter of TraceQuery applies: agent, user, session, status and time window."""
        await store.put(trace("a", started_at=at(0)))
        await store.put(trace("b", BOB, started_at=at(1), session_id="s2"))
        await store.put(trace("c", STRANGER, started_at=at(2), status=TurnStatus.DEGRADED))
        assert await listed(store, agent_id="agent-1") == ["b", "a"]
        assert await listed(store, user_id="alice") == ["c", "a"]
        assert await listed(store, agent_id="agent-1", user_id="alice") == ["a"]
        assert await listed(store, session_id="s2") == ["b"]
        assert await listed(store, status=TurnStatus.DEGRADED) == ["c"]
        assert await listed(store, since=at(1)) == ["c", "b"]
        assert await listed(store, until=at(1)) == ["a"]
        assert await listed(store, since=at(1), until=at(2)) == ["b"]

    async def test_list_by_users_and_words(self, store: TraceStore) -> None:
        """``user_ids`` keeps those users' traces; ``text`` those holding every word given."""
        await store.put(trace("a", started_at=at(0), user_input="Book the Ferry to Skye"))
        await store.put(trace("b", BOB, started_at=at(1), user_input="ferry times"))
        await store.put(trace("c", STRANGER, started_at=at(2), user_input="the harbour"))
        assert await listed(store, user_ids=("alice",)) == ["c", "a"]
        assert await listed(store, user_ids=("bob", "nobody")) == ["b"]
        assert await listed(store, user_ids=()) == []
        assert await listed(store, text="ferry") == ["b", "a"]
        assert await listed(store, text="FERRY skye") == ["a"]
        assert await listed(store, text="ferry", user_ids=("bob",)) == ["b"]
        assert await listed(store, text="ferry harbour") == []
        assert await listed(store, text="!!") == []

    async def test_list_by_turn_and_parent(self, store: TraceStore) -> None:
        """``turn_id`` finds one turn whoever owns it; ``parent_turn_id`` lists its followers."""
        await store.put(trace("root", started_at=at(0)))
        await store.put(trace("child-1", started_at=at(1), parent_turn_id="root"))
        await store.put(trace("child-2", BOB, started_at=at(2), parent_turn_id="root"))
        await store.put(trace("grandchild", started_at=at(3), parent_turn_id="child-1"))
        assert await listed(store, turn_id="child-2") == ["child-2"]
        assert await listed(store, parent_turn_id="root") == ["child-2", "child-1"]
        assert await listed(store, parent_turn_id="root", user_id="alice") == ["child-1"]
        assert await listed(store, turn_id="missing") == []

    async def test_list_pages_by_keyset(self, store: TraceStore) -> None:
        """``older_than`` continues after a trace; ties in time are ordered by turn id."""
        for name, minute in (("a", 0), ("b", 1), ("c", 1), ("d", 2), ("e", 3)):
            await store.put(trace(name, started_at=at(minute)))
        first = await store.list(TraceQuery(limit=2))
        assert [t.turn_id for t in first] == ["e", "d"]
        last = first[-1]
        page = await listed(store, older_than=(last.started_at, last.turn_id), limit=2)
        assert page == ["c", "b"]
        assert await listed(store, older_than=(at(1), "c"), limit=5) == ["b", "a"]
        assert await listed(store, older_than=(at(0), "a")) == []

    async def test_list_oldest_first_after_a_trace(self, store: TraceStore) -> None:
        """``newer_than`` with ``oldest_first`` finds the traces that came next, in order."""
        for name, minute in (("a", 0), ("b", 1), ("c", 1), ("d", 2)):
            await store.put(trace(name, started_at=at(minute)))
        assert await listed(store, oldest_first=True) == ["a", "b", "c", "d"]
        assert await listed(store, newer_than=(at(1), "b"), oldest_first=True) == ["c", "d"]
        assert await listed(store, newer_than=(at(1), "b"), limit=1, oldest_first=True) == ["c"]
        assert await listed(store, newer_than=(at(2), "d")) == []
        between = await listed(store, newer_than=(at(0), "a"), older_than=(at(2), "d"))
        assert between == ["c", "b"]

    async def test_prune_by_age_removes_what_started_before(self, store: TraceStore) -> None:
        """``prune(before=...)`` removes every tenant's earlier traces, and counts them."""
        await store.put(trace("old", started_at=at(0)))
        await store.put(trace("bobs-old", BOB, started_at=at(1)))
        await store.put(trace("new", started_at=at(5)))
        assert await store.prune(before=at(5)) == 2
        assert await listed(store) == ["new"]
        assert await store.get(ALICE, "old") is None

    async def test_prune_by_count_keeps_the_newest(self, store: TraceStore) -> None:
        """``prune(keep=n)`` keeps the ``n`` newest, ties broken by turn id as ``list`` does."""
        for name, minute in (("a", 0), ("b", 1), ("c", 1), ("d", 2)):
            await store.put(trace(name, started_at=at(minute)))
        assert await store.prune(keep=2) == 2
        assert await listed(store) == ["d", "c"]
        assert await store.prune(keep=2) == 0

    async def test_prune_with_both_bounds_and_with_none(self, store: TraceStore) -> None:
        """Both bounds apply together; with neither, nothing is removed."""
        for minute in range(5):
            await store.put(trace(f"t{minute}", started_at=at(minute)))
        assert await store.prune() == 0
        assert await store.prune(before=at(1), keep=3) == 2
        assert await listed(store) == ["t4", "t3", "t2"]
