"""Conformance of the consciousness, frontal-cortex, conversation and scratch stores."""

from __future__ import annotations

from typing import Any

import pytest

from prefrontal.stores.consciousness import (
    AgentProfile,
    Capability,
    ConsciousnessStore,
    Governance,
    Mode,
)
from prefrontal.stores.conversation import (
    ConversationStore,
    ConversationSummary,
    ConversationTurn,
    Role,
)
from prefrontal.stores.frontal_cortex import (
    FrontalCortexStore,
    FrontalItem,
    FrontalKind,
    FrontalQuery,
    FrontalStatus,
)
from prefrontal.stores.scratch_page import Observation, ScratchKind, ScratchPageStore
from prefrontal.stores.tenancy import Scope, Tenant
from prefrontal.testing.conformance.base import ALICE, BOB, STRANGER, StoreSuite, at
from prefrontal.testing.conformance.ownership import (
    ConversationOwnership,
    FrontalOwnership,
    ScratchOwnership,
)


def profile(agent_id: str = "agent-1", **fields: Any) -> AgentProfile:
    """A profile with a little of everything."""
    return AgentProfile(
        agent_id=agent_id,
        name=fields.pop("name", "Ada"),
        values=("honesty",),
        mandates=("help with travel",),
        governance=Governance(safety_policies=("no medical advice",), escalation=("human",)),
        modes=(Mode(name="plan", constraints=("no bookings",)), Mode(name="act")),
        current_mode="plan",
        capabilities=(Capability(name="search", version="2"),),
        updated_at=at(0),
        **fields,
    )


class ConsciousnessStoreSuite(StoreSuite):
    """Every contract of :class:`~prefrontal.stores.ConsciousnessStore`."""

    async def test_unknown_agent_has_no_profile(self, store: ConsciousnessStore) -> None:
        """``get_profile`` of an agent never put is ``None``."""
        assert await store.get_profile(ALICE) is None

    async def test_profile_round_trips(self, store: ConsciousnessStore) -> None:
        """A profile put is returned equal."""
        await store.put_profile(profile())
        assert await store.get_profile(ALICE) == profile()

    async def test_every_user_of_the_agent_sees_its_profile(
        self, store: ConsciousnessStore
    ) -> None:
        """The profile belongs to the agent: Bob sees the same one as Alice."""
        await store.put_profile(profile())
        assert await store.get_profile(BOB) == profile()

    async def test_another_agent_never_sees_the_profile(self, store: ConsciousnessStore) -> None:
        """A tenant of another agent gets its own profile or ``None``, never this one."""
        await store.put_profile(profile())
        assert await store.get_profile(STRANGER) is None
        await store.put_profile(profile("agent-2", name="Bo"))
        stranger = await store.get_profile(STRANGER)
        assert stranger is not None
        assert stranger.name == "Bo"

    async def test_put_replaces_the_profile(self, store: ConsciousnessStore) -> None:
        """The last profile put for an agent is the one returned."""
        await store.put_profile(profile())
        await store.put_profile(profile(name="Ada II", version=2))
        got = await store.get_profile(ALICE)
        assert got is not None
        assert (got.name, got.version) == ("Ada II", 2)


def frontal(item_id: str, tenant: Tenant = ALICE, **fields: Any) -> FrontalItem:
    """A goal owned by ``tenant`` unless said otherwise."""
    fields.setdefault("kind", FrontalKind.GOAL)
    fields.setdefault("updated_at", at(0))
    fields.setdefault("created_at", at(0))
    return FrontalItem(
        item_id=item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        title=fields.pop("title", f"item {item_id}"),
        **fields,
    )


async def frontal_ids(store: FrontalCortexStore, tenant: Tenant, **fields: Any) -> list[str]:
    """The ids ``query`` returns for ``tenant``."""
    return [item.item_id for item in await store.query(tenant, FrontalQuery(**fields))]


class FrontalCortexStoreSuite(FrontalOwnership, StoreSuite):
    """Every contract of :class:`~prefrontal.stores.FrontalCortexStore`."""

    async def test_item_round_trips(self, store: FrontalCortexStore) -> None:
        """An item put comes back equal, field for field."""
        item = frontal(
            "g",
            detail="book flights",
            priority=0.8,
            status=FrontalStatus.BLOCKED,
            blocking=True,
            due_at=at(90),
            tags=("travel",),
        )
        await store.put(item)
        assert await store.query(ALICE, FrontalQuery()) == [item]

    async def test_newest_update_first_and_limited(self, store: FrontalCortexStore) -> None:
        """Items come most recently updated first, at most ``limit`` of them."""
        for i in range(5):
            await store.put(frontal(f"g{i}", updated_at=at(i)))
        assert await frontal_ids(store, ALICE) == ["g4", "g3", "g2", "g1", "g0"]
        assert await frontal_ids(store, ALICE, limit=2) == ["g4", "g3"]

    async def test_filters_by_kind_status_and_update_time(self, store: FrontalCortexStore) -> None:
        """``kinds``, ``statuses`` and ``updated_since`` (strictly after) all apply."""
        await store.put(frontal("goal", updated_at=at(1)))
        await store.put(frontal("q", kind=FrontalKind.QUESTION, updated_at=at(2)))
        await store.put(frontal("done", status=FrontalStatus.DONE, updated_at=at(3)))
        assert await frontal_ids(store, ALICE, kinds=(FrontalKind.QUESTION,)) == ["q"]
        assert await frontal_ids(store, ALICE, statuses=(FrontalStatus.DONE,)) == ["done"]
        assert await frontal_ids(store, ALICE, updated_since=at(2)) == ["done"]
        assert await frontal_ids(store, ALICE, kinds=(), statuses=None) == []

    async def test_put_replaces_the_item(self, store: FrontalCortexStore) -> None:
        """Putting an item with the same id replaces it."""
        await store.put(frontal("g", title="first"))
        await store.put(frontal("g", title="second", updated_at=at(1)))
        assert [i.title for i in await store.query(ALICE, FrontalQuery())] == ["second"]

    async def test_tenancy(self, store: FrontalCortexStore) -> None:
        """Another agent sees nothing; another user sees only shared items."""
        await store.put(frontal("private"))
        await store.put(frontal("shared", scope=Scope.SHARED))
        assert await frontal_ids(store, STRANGER) == []
        assert await frontal_ids(store, BOB) == ["shared"]
        assert sorted(await frontal_ids(store, ALICE)) == ["private", "shared"]


def turn(item_id: str, tenant: Tenant = ALICE, **fields: Any) -> ConversationTurn:
    """A user message in session ``s1`` at ``T0`` unless said otherwise."""
    fields.setdefault("session_id", "s1")
    fields.setdefault("role", Role.USER)
    fields.setdefault("created_at", at(0))
    return ConversationTurn(
        item_id=item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        content=fields.pop("content", f"message {item_id}"),
        **fields,
    )


async def recent_ids(
    store: ConversationStore, tenant: Tenant, limit: int = 10, session_id: str | None = None
) -> list[str]:
    """The ids ``recent`` returns."""
    turns = await store.recent(tenant, limit=limit, session_id=session_id)
    return [t.item_id for t in turns]


class ConversationStoreSuite(ConversationOwnership, StoreSuite):
    """Every contract of :class:`~prefrontal.stores.ConversationStore`."""

    async def test_turn_round_trips(self, store: ConversationStore) -> None:
        """A turn appended comes back equal."""
        message = turn("t", role=Role.TOOL, speaker="search", metadata={"n": 3, "ok": True})
        await store.append(message)
        assert await store.recent(ALICE, limit=5) == [message]

    async def test_recent_gives_the_newest_oldest_first(self, store: ConversationStore) -> None:
        """``recent`` keeps the newest ``limit`` turns and returns them in time order."""
        for i in (3, 0, 4, 1, 2):
            await store.append(turn(f"t{i}", created_at=at(i)))
        assert await recent_ids(store, ALICE, limit=3) == ["t2", "t3", "t4"]
        assert await recent_ids(store, ALICE, limit=0) == []

    async def test_ties_keep_insertion_order(self, store: ConversationStore) -> None:
        """Turns with the same time come in the order they were appended."""
        for name in ("b", "a", "c"):
            await store.append(turn(name))
        assert await recent_ids(store, ALICE) == ["b", "a", "c"]

    async def test_replacing_a_turn_keeps_its_place(self, store: ConversationStore) -> None:
        """Appending an existing id replaces the turn where it stood."""
        for name in ("a", "b", "c"):
            await store.append(turn(name))
        await store.append(turn("a", content="edited"))
        turns = await store.recent(ALICE, limit=10)
        assert next((t.item_id, t.content) for t in turns) == ("a", "edited")
        assert [t.item_id for t in turns] == ["a", "b", "c"]

    async def test_session_filter(self, store: ConversationStore) -> None:
        """With ``session_id``, only that session's turns are returned."""
        await store.append(turn("x", session_id="s1"))
        await store.append(turn("y", session_id="s2", created_at=at(1)))
        assert await recent_ids(store, ALICE, session_id="s2") == ["y"]
        assert await recent_ids(store, ALICE) == ["x", "y"]

    async def test_tenancy(self, store: ConversationStore) -> None:
        """Another agent sees no turns; another user sees only shared ones."""
        await store.append(turn("private"))
        await store.append(turn("shared", scope=Scope.SHARED, created_at=at(1)))
        assert await recent_ids(store, STRANGER) == []
        assert await recent_ids(store, BOB) == ["shared"]

    async def test_summary_round_trips_and_is_replaced(self, store: ConversationStore) -> None:
        """The last summary put for a user is returned; other users and agents get none."""
        assert await store.get_summary(ALICE) is None
        first = ConversationSummary(
            agent_id="agent-1", user_id="alice", text="one", updated_at=at(0)
        )
        second = first.model_copy(update={"text": "two", "topics": ("travel",)})
        await store.put_summary(first)
        await store.put_summary(second)
        assert await store.get_summary(ALICE) == second
        assert await store.get_summary(BOB) is None
        assert await store.get_summary(STRANGER) is None

    async def test_delete_removes_only_the_tenants_own_messages(
        self, store: ConversationStore
    ) -> None:
        """``delete`` returns the messages it removed; another user's, shared or not, stay."""
        await store.append(turn("a"))
        await store.append(turn("b", created_at=at(1)))
        await store.append(turn("c", created_at=at(2)))
        bobs = turn("a", tenant=BOB, scope=Scope.SHARED, created_at=at(3))
        await store.append(bobs)
        removed = await store.delete(ALICE, ["a", "c", "missing"])
        assert sorted(m.item_id for m in removed) == ["a", "c"]
        assert await recent_ids(store, ALICE) == ["b", "a"]
        assert await store.recent(BOB, limit=5) == [bobs]
        assert await store.delete(ALICE, ["a", "c"]) == []
        assert await store.delete(STRANGER, ["b"]) == []

    async def test_drop_summary(self, store: ConversationStore) -> None:
        """``drop_summary`` removes the tenant's summary only, and says whether there was one."""
        for tenant in (ALICE, BOB):
            await store.put_summary(
                ConversationSummary(agent_id=tenant.agent_id, user_id=tenant.user_id, text="so far")
            )
        assert await store.drop_summary(ALICE)
        assert not await store.drop_summary(ALICE)
        assert await store.get_summary(ALICE) is None
        assert await store.get_summary(BOB) is not None


def note(item_id: str, tenant: Tenant = ALICE, **fields: Any) -> Observation:
    """A scratch observation at ``T0`` unless said otherwise."""
    fields.setdefault("created_at", at(0))
    return Observation(
        item_id=item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        content=fields.pop("content", f"note {item_id}"),
        **fields,
    )


async def active_ids(store: ScratchPageStore, tenant: Tenant, limit: int = 10) -> list[str]:
    """The ids ``active`` returns at ``T0`` plus one hour."""
    return [o.item_id for o in await store.active(tenant, now=at(60), limit=limit)]


class ScratchPageStoreSuite(ScratchOwnership, StoreSuite):
    """Every contract of :class:`~prefrontal.stores.ScratchPageStore`."""

    async def test_entry_round_trips(self, store: ScratchPageStore) -> None:
        """An entry put comes back equal."""
        entry = note("n", kind=ScratchKind.RISK_ALERT, priority=0.9, tags=("payments",))
        await store.put(entry)
        assert await store.active(ALICE, now=at(60), limit=5) == [entry]

    async def test_priority_first_then_newest(self, store: ScratchPageStore) -> None:
        """Active entries come highest priority first, then newest, at most ``limit``."""
        await store.put(note("low", priority=0.1, created_at=at(9)))
        await store.put(note("old", priority=0.7, created_at=at(1)))
        await store.put(note("new", priority=0.7, created_at=at(2)))
        await store.put(note("top", priority=1.0))
        assert await active_ids(store, ALICE) == ["top", "new", "old", "low"]
        assert await active_ids(store, ALICE, limit=2) == ["top", "new"]

    async def test_resolved_and_expired_entries_are_not_active(
        self, store: ScratchPageStore
    ) -> None:
        """``active`` leaves out resolved entries and those expired at ``now``."""
        await store.put(note("done", resolved=True))
        await store.put(note("expired", expires_at=at(30)))
        await store.put(note("later", expires_at=at(90)))
        assert await active_ids(store, ALICE) == ["later"]

    async def test_resolve(self, store: ScratchPageStore) -> None:
        """``resolve`` retires a visible entry and says so; unknown ids return ``False``."""
        await store.put(note("n"))
        assert await store.resolve(ALICE, "n") is True
        assert await active_ids(store, ALICE) == []
        assert await store.resolve(ALICE, "missing") is False
        assert await store.resolve(ALICE, "") is False

    async def test_resolve_of_an_invisible_entry_changes_nothing(
        self, store: ScratchPageStore
    ) -> None:
        """Bob and another agent cannot resolve Alice's private entry."""
        await store.put(note("n"))
        assert await store.resolve(BOB, "n") is False
        assert await store.resolve(STRANGER, "n") is False
        assert await active_ids(store, ALICE) == ["n"]

    async def test_tenancy(self, store: ScratchPageStore) -> None:
        """Another agent sees nothing; another user sees only shared entries."""
        await store.put(note("private"))
        await store.put(note("shared", scope=Scope.SHARED))
        assert await active_ids(store, STRANGER) == []
        assert await active_ids(store, BOB) == ["shared"]

    @pytest.mark.parametrize("limit", [0, -1])
    async def test_no_room_means_no_entries(self, store: ScratchPageStore, limit: int) -> None:
        """A limit of zero or less returns nothing."""
        await store.put(note("n"))
        await store.put(note("m"))
        assert await active_ids(store, ALICE, limit=limit) == []
