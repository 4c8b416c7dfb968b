"""Conformance of ownership: ids unique per agent and user, and erasure of one user.

Each class here is mixed into the suite of its store kind, so a backend that
runs the suites runs these too: two users writing the same id never touch
each other's records, ``delete`` and ``erase`` remove only the tenant's own,
and everything else is left as it was.
"""

from __future__ import annotations

from typing import Any

from prefrontal.stores.conversation import ConversationStore, ConversationSummary, ConversationTurn
from prefrontal.stores.frontal_cortex import FrontalCortexStore, FrontalItem, FrontalKind
from prefrontal.stores.frontal_cortex import FrontalQuery as Goals
from prefrontal.stores.long_term import MemoryItem, MemoryQuery, MemoryStore
from prefrontal.stores.scratch_page import Observation, ScratchPageStore
from prefrontal.stores.tenancy import Scope, Tenant
from prefrontal.stores.traces import TraceStore
from prefrontal.stores.working_memory import SessionKey, SessionState, WorkingMemoryStore
from prefrontal.testing.conformance.base import ALICE, BOB, STRANGER, at
from prefrontal.traces.models import TurnStatus, TurnTrace

CAROL = Tenant(agent_id=ALICE.agent_id, user_id="carol")
"""A third user of the agent."""
DAVE = Tenant(agent_id=ALICE.agent_id, user_id="dave")
"""A fourth user, who owns nothing."""


def _memory(item_id: str, content: str, tenant: Tenant, **fields: Any) -> MemoryItem:
    fields.setdefault("created_at", at(0))
    return MemoryItem(
        item_id=item_id, agent_id=tenant.agent_id, user_id=tenant.user_id, content=content, **fields
    )


async def _found(store: MemoryStore, tenant: Tenant, text: str) -> list[tuple[str, str]]:
    """``(item_id, content)`` of each hit of ``text``, best first."""
    hits = await store.search(tenant, MemoryQuery(text=text, now=at(60)))
    return [(hit.item.item_id, hit.item.content) for hit in hits]


class MemoryOwnership:
    """Ids per agent and user, ``delete`` and ``erase`` of a :class:`MemoryStore`."""

    async def test_two_users_writing_one_id_keep_their_own_items(self, store: MemoryStore) -> None:
        """Bob's ``note-1`` does not replace Alice's: each gets and finds their own."""
        await store.put(_memory("note-1", "alice parks on level three", ALICE))
        await store.put(_memory("note-1", "bob parks on level five", BOB))
        assert [i.content for i in await store.get(ALICE, ["note-1"])] == [
            "alice parks on level three"
        ]
        assert [i.content for i in await store.get(BOB, ["note-1"])] == ["bob parks on level five"]
        assert await _found(store, ALICE, "parks level") == [
            ("note-1", "alice parks on level three")
        ]
        assert await _found(store, BOB, "parks level") == [("note-1", "bob parks on level five")]

    async def test_get_gives_the_tenants_own_item_before_a_shared_one(
        self, store: MemoryStore
    ) -> None:
        """Of one id, ``get`` gives the tenant's own item, else the first owner's shared one."""
        await store.put(_memory("faq", "carol's shared answer", CAROL, scope=Scope.SHARED))
        await store.put(_memory("faq", "bob's shared answer", BOB, scope=Scope.SHARED))
        await store.put(_memory("faq", "alice's own answer", ALICE))
        assert [i.content for i in await store.get(ALICE, ["faq"])] == ["alice's own answer"]
        assert [i.content for i in await store.get(CAROL, ["faq"])] == ["carol's shared answer"]
        assert [i.content for i in await store.get(DAVE, ["faq"])] == ["bob's shared answer"]
        assert await store.get(STRANGER, ["faq"]) == []

    async def test_search_returns_every_visible_item_of_a_shared_id(
        self, store: MemoryStore
    ) -> None:
        """Search ranks items, not ids: the own item and another user's shared one both come."""
        await store.put(_memory("faq", "the shared wiki answer", BOB, scope=Scope.SHARED))
        await store.put(_memory("faq", "my own wiki answer", ALICE))
        found = sorted(content for _, content in await _found(store, ALICE, "wiki answer"))
        assert found == ["my own wiki answer", "the shared wiki answer"]

    async def test_record_recall_counts_the_item_get_gives(self, store: MemoryStore) -> None:
        """Recording a recall of an id touches the item ``get`` gives, not another of that id."""
        await store.put(_memory("faq", "bob's shared answer", BOB, scope=Scope.SHARED))
        await store.put(_memory("faq", "alice's own answer", ALICE))
        await store.record_recall(ALICE, ["faq"], at(5))
        (bobs,) = await store.get(BOB, ["faq"])
        (alices,) = await store.get(ALICE, ["faq"])
        assert (alices.recall_count, bobs.recall_count) == (1, 0)

    async def test_delete_removes_only_the_tenants_own_items(self, store: MemoryStore) -> None:
        """``delete`` removes the tenant's items of those ids and counts them; others stay."""
        await store.put(_memory("note-1", "alice's lunch order", ALICE))
        await store.put(_memory("note-2", "alice's coffee order", ALICE))
        await store.put(_memory("note-1", "bob's lunch order", BOB))
        await store.put(_memory("wiki", "shared lunch menu", BOB, scope=Scope.SHARED))
        assert await store.delete(ALICE, ["note-1", "wiki", "unknown", "note-1"]) == 1
        assert await store.get(ALICE, ["note-1", "note-2"]) == [
            (await store.get(ALICE, ["note-2"]))[0]
        ]
        assert [i.content for i in await store.get(BOB, ["note-1", "wiki"])] == [
            "bob's lunch order",
            "shared lunch menu",
        ]
        assert ("note-1", "alice's lunch order") not in await _found(store, ALICE, "lunch order")
        assert await store.delete(ALICE, []) == 0

    async def test_a_deleted_item_leaves_scores_as_if_never_put(self, store: MemoryStore) -> None:
        """After ``delete``, search scores equal those from before the item was put."""
        await store.put(_memory("keep", "the train to Porto leaves at nine", ALICE))
        before = await store.search(ALICE, MemoryQuery(text="train Porto", now=at(60)))
        await store.put(_memory("gone", "the train to Lyon is late again", ALICE))
        await store.delete(ALICE, ["gone"])
        after = await store.search(ALICE, MemoryQuery(text="train Porto", now=at(60)))
        assert [(h.item.item_id, h.score) for h in after] == [
            (h.item.item_id, h.score) for h in before
        ]

    async def test_erase_removes_everything_the_tenant_owns(self, store: MemoryStore) -> None:
        """``erase`` removes the tenant's private and shared items; other tenants keep theirs."""
        await store.put_many(
            [
                _memory("a1", "alice's private plan", ALICE),
                _memory("a2", "alice's shared plan", ALICE, scope=Scope.SHARED),
                _memory("a1", "bob's private plan", BOB),
                _memory("a1", "alice elsewhere plan", STRANGER),
            ]
        )
        assert await store.erase(ALICE) == 2
        assert await store.get(ALICE, ["a1", "a2"]) == []
        assert await _found(store, ALICE, "plan") == []
        assert await _found(store, BOB, "plan") == [("a1", "bob's private plan")]
        assert await _found(store, STRANGER, "plan") == [("a1", "alice elsewhere plan")]
        assert await store.erase(ALICE) == 0


def _goal(item_id: str, tenant: Tenant, title: str, **fields: Any) -> FrontalItem:
    fields.setdefault("updated_at", at(0))
    fields.setdefault("created_at", at(0))
    return FrontalItem(
        item_id=item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        kind=FrontalKind.GOAL,
        title=title,
        **fields,
    )


async def _titles(store: FrontalCortexStore, tenant: Tenant) -> list[str]:
    return sorted(item.title for item in await store.query(tenant, Goals()))


class FrontalOwnership:
    """Ids per agent and user, and ``erase``, of a :class:`FrontalCortexStore`."""

    async def test_two_users_writing_one_id_keep_their_own_goals(
        self, store: FrontalCortexStore
    ) -> None:
        """Bob's goal ``g1`` does not replace Alice's."""
        await store.put(_goal("g1", ALICE, "alice ships the report"))
        await store.put(_goal("g1", BOB, "bob books the venue"))
        assert await _titles(store, ALICE) == ["alice ships the report"]
        assert await _titles(store, BOB) == ["bob books the venue"]

    async def test_erase_removes_the_tenants_goals_only(self, store: FrontalCortexStore) -> None:
        """``erase`` removes the tenant's private and shared goals; others keep theirs."""
        await store.put(_goal("g1", ALICE, "alice private"))
        await store.put(_goal("g2", ALICE, "alice shared", scope=Scope.SHARED))
        await store.put(_goal("g1", BOB, "bob private"))
        await store.put(_goal("g1", STRANGER, "elsewhere"))
        assert await store.erase(ALICE) == 2
        assert await _titles(store, ALICE) == []
        assert await _titles(store, BOB) == ["bob private"]
        assert await _titles(store, STRANGER) == ["elsewhere"]


def _message(item_id: str, tenant: Tenant, content: str) -> ConversationTurn:
    return ConversationTurn(
        item_id=item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        session_id="s1",
        role="user",
        content=content,
        created_at=at(0),
    )


async def _said(store: ConversationStore, tenant: Tenant) -> list[str]:
    return [turn.content for turn in await store.recent(tenant, limit=10)]


class ConversationOwnership:
    """Ids per agent and user, and ``erase``, of a :class:`ConversationStore`."""

    async def test_two_users_writing_one_id_keep_their_own_turns(
        self, store: ConversationStore
    ) -> None:
        """Bob's message ``m1`` does not replace Alice's."""
        await store.append(_message("m1", ALICE, "alice says hello"))
        await store.append(_message("m1", BOB, "bob says hi"))
        assert await _said(store, ALICE) == ["alice says hello"]
        assert await _said(store, BOB) == ["bob says hi"]

    async def test_erase_removes_the_tenants_turns_and_summary(
        self, store: ConversationStore
    ) -> None:
        """``erase`` removes the tenant's turns and summary and counts them; others stay."""
        await store.append(_message("m1", ALICE, "alice one"))
        await store.append(_message("m2", ALICE, "alice two"))
        await store.append(_message("m1", BOB, "bob one"))
        for tenant in (ALICE, BOB):
            summary = ConversationSummary(
                agent_id=tenant.agent_id, user_id=tenant.user_id, text="so far", updated_at=at(0)
            )
            await store.put_summary(summary)
        assert await store.erase(ALICE) == 3
        assert await _said(store, ALICE) == []
        assert await store.get_summary(ALICE) is None
        assert await _said(store, BOB) == ["bob one"]
        assert await store.get_summary(BOB) is not None


def _entry(item_id: str, tenant: Tenant, content: str, **fields: Any) -> Observation:
    return Observation(
        item_id=item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        content=content,
        created_at=at(0),
        **fields,
    )


async def _notes(store: ScratchPageStore, tenant: Tenant) -> list[str]:
    return sorted(entry.content for entry in await store.active(tenant, now=at(60), limit=10))


class ScratchOwnership:
    """Ids per agent and user, ``resolve`` of a shared id, and ``erase``, of a scratch page."""

    async def test_two_users_writing_one_id_keep_their_own_entries(
        self, store: ScratchPageStore
    ) -> None:
        """Bob's entry ``n1`` does not replace Alice's; resolving hers leaves his."""
        await store.put(_entry("n1", ALICE, "alice's alert"))
        await store.put(_entry("n1", BOB, "bob's alert"))
        assert await store.resolve(ALICE, "n1")
        assert await _notes(store, ALICE) == []
        assert await _notes(store, BOB) == ["bob's alert"]

    async def test_resolve_picks_the_tenants_own_entry_first(self, store: ScratchPageStore) -> None:
        """Of one id, ``resolve`` marks the tenant's own entry, not another's shared one."""
        await store.put(_entry("n1", BOB, "bob's shared alert", scope=Scope.SHARED))
        await store.put(_entry("n1", ALICE, "alice's alert"))
        assert await store.resolve(ALICE, "n1")
        assert await _notes(store, ALICE) == ["bob's shared alert"]

    async def test_erase_removes_the_tenants_entries_only(self, store: ScratchPageStore) -> None:
        """``erase`` removes the tenant's private and shared entries; others keep theirs."""
        await store.put(_entry("n1", ALICE, "alice private"))
        await store.put(_entry("n2", ALICE, "alice shared", scope=Scope.SHARED))
        await store.put(_entry("n1", BOB, "bob private"))
        assert await store.erase(ALICE) == 2
        assert await _notes(store, ALICE) == []
        assert await _notes(store, BOB) == ["bob private"]


class WorkingMemoryOwnership:
    """``erase`` of a :class:`WorkingMemoryStore`."""

    async def test_erase_removes_the_tenants_sessions_only(self, store: WorkingMemoryStore) -> None:
        """``erase`` removes every session of the tenant; other users' sessions stay."""
        for tenant, session in ((ALICE, "s1"), (ALICE, "s2"), (BOB, "s1")):
            key = SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id=session)
            await store.save(SessionState(key=key, updated_at=at(0), started_at=at(0)))
        assert await store.erase(ALICE) == 2
        assert await store.recent_sessions(ALICE, since=at(-60), limit=10) == []
        assert len(await store.recent_sessions(BOB, since=at(-60), limit=10)) == 1
        alice = SessionKey(agent_id=ALICE.agent_id, user_id=ALICE.user_id, session_id="s1")
        assert await store.load(alice) is None


def _trace(turn_id: str, tenant: Tenant) -> TurnTrace:
    return TurnTrace(
        turn_id=turn_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        session_id="s1",
        started_at=at(0),
        duration_ms=1.0,
        deadline_ms=1000.0,
        status=TurnStatus.OK,
        total_budget=100,
        total_tokens=10,
        checksum="c",
        ready_for_router=True,
        phases=(),
    )


class TraceOwnership:
    """``erase`` of a :class:`TraceStore`."""

    async def test_erase_removes_the_tenants_traces_only(self, store: TraceStore) -> None:
        """``erase`` removes every trace of the tenant; other users' traces stay."""
        for turn_id, tenant in (("t1", ALICE), ("t2", ALICE), ("t3", BOB)):
            await store.put(_trace(turn_id, tenant))
        assert await store.erase(ALICE) == 2
        assert await store.get(ALICE, "t1") is None
        assert await store.get(BOB, "t3") is not None
