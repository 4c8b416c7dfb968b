"""Loading phases make each fragment once per stored record: the same records, the same fragments.

An in-memory store hands out the same frozen records turn after turn; the
fragments made of them are remembered by the records themselves, so a
changed record (a new object) gives a new fragment, another token counter
gives fragments counted with it, and what one tenant's turn made is never
shown to a tenant whose store reads do not return its record.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from prefrontal import Orchestrator, OrchestratorConfig, Section, Stores
from prefrontal.bundle.models import Fragment
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, seed
from prefrontal.demo.seed import profile
from prefrontal.phases import consciousness, conversation, frontal_cortex, scratch_page
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import TurnState
from prefrontal.stores import (
    ConversationTurn,
    FrontalItem,
    FrontalKind,
    FrontalStatus,
    Observation,
    Scope,
)
from prefrontal.stores.tenancy import Tenant
from tests.conftest import FIXED_NOW, counting_ids, demo_request, fixed_clock, orchestrator

pytestmark = pytest.mark.anyio


class Words:
    """A token counter that counts words (not the default encoding's tokens)."""

    encoding_name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


async def loaded(orch: Orchestrator, phase: PhaseSpec, **request: object) -> list[Fragment]:
    """What ``phase`` loads on a fresh turn of ``request``."""
    turn: TurnState = orch._new_turn(demo_request(**request))
    await phase.run(turn)
    return turn.loads[Section(phase.name)]


def goal(item_id: str, user_id: str = DEMO_USER, **fields: object) -> FrontalItem:
    """An open goal of the demo agent, created and updated at the fixed instant."""
    return FrontalItem.model_validate(
        {
            "item_id": item_id,
            "agent_id": DEMO_AGENT,
            "user_id": user_id,
            "kind": FrontalKind.GOAL,
            "title": f"goal {item_id}",
            "created_at": FIXED_NOW - timedelta(days=1),
            "updated_at": FIXED_NOW - timedelta(days=1),
            **fields,
        }
    )


@pytest.mark.parametrize(
    ("spec", "least"),
    [
        (frontal_cortex.SPEC, 1),
        (scratch_page.SPEC, 1),
        (consciousness.SPEC, len(consciousness.PARTS)),
        (conversation.SPEC, 2),
    ],
    ids=["goals", "scratch entries", "profile", "messages"],
)
async def test_unchanged_records_give_the_very_same_fragments(spec: PhaseSpec, least: int) -> None:
    """A second turn on unchanged goals, scratch entries, profile (at the same minute) or
    messages is given the very fragments the first made, not new ones."""
    stores = Stores.in_memory()
    await seed(stores)
    orch = orchestrator(stores)
    first = await loaded(orch, spec)
    second = await loaded(orch, spec)
    assert len(first) >= least
    assert all(a is b for a, b in zip(first, second, strict=True))


async def test_a_changed_goal_gives_a_new_fragment() -> None:
    """A goal put again with another title is shown with it; the others keep their fragments."""
    stores = Stores.in_memory()
    await stores.frontal_cortex.put(goal("g1", priority=0.9))
    await stores.frontal_cortex.put(goal("g2", priority=0.1))
    orch = orchestrator(stores)
    before = await loaded(orch, frontal_cortex.SPEC)
    await stores.frontal_cortex.put(goal("g1", priority=0.9, title="renamed"))
    after = await loaded(orch, frontal_cortex.SPEC)
    assert [f.text.endswith("renamed") for f in after] == [True, False]
    assert after[0] is not before[0]
    assert after[1] is before[1]


async def test_a_goal_at_another_rank_is_another_fragment() -> None:
    """The rank is part of what a fragment is made for: a goal that moves down is ranked anew."""
    stores = Stores.in_memory()
    await stores.frontal_cortex.put(goal("g1", priority=0.5))
    orch = orchestrator(stores)
    alone = await loaded(orch, frontal_cortex.SPEC)
    await stores.frontal_cortex.put(goal("g0", priority=0.9))
    behind = await loaded(orch, frontal_cortex.SPEC)
    assert [(f.provenance.item_ids[0], f.rank) for f in behind] == [("g0", 0), ("g1", 1)]
    assert alone[0].rank == 0


async def test_another_token_counter_counts_its_own_fragments() -> None:
    """Two orchestrators with different counters on one store each get their own counts."""
    stores = Stores.in_memory()
    await stores.frontal_cortex.put(goal("g1", detail="a few more words here"))
    default = await loaded(orchestrator(stores), frontal_cortex.SPEC)
    words = Orchestrator(
        stores, OrchestratorConfig(), clock=fixed_clock, ids=counting_ids(), counter=Words()
    )
    counted = await loaded(words, frontal_cortex.SPEC)
    assert counted[0].tokens == len(counted[0].text.split())
    assert counted[0].tokens != default[0].tokens


async def test_a_tenant_never_sees_goals_made_for_another() -> None:
    """After one user's turn, another user sees shared goals only, and another agent none."""
    stores = Stores.in_memory()
    await stores.frontal_cortex.put(goal("mine"))
    await stores.frontal_cortex.put(goal("ours", scope=Scope.SHARED))
    await stores.frontal_cortex.put(goal("done", status=FrontalStatus.DONE))
    orch = orchestrator(stores)
    owner = await loaded(orch, frontal_cortex.SPEC)
    other_user = await loaded(orch, frontal_cortex.SPEC, user_id="bob")
    other_agent = await loaded(orch, frontal_cortex.SPEC, agent_id="other")
    assert sorted(f.provenance.item_ids[0] for f in owner) == ["mine", "ours"]
    assert [f.provenance.item_ids[0] for f in other_user] == ["ours"]
    assert other_agent == []


def entry(item_id: str, user_id: str = DEMO_USER, **fields: object) -> Observation:
    """A scratch entry of the demo agent, created at the fixed instant."""
    return Observation.model_validate(
        {
            "item_id": item_id,
            "agent_id": DEMO_AGENT,
            "user_id": user_id,
            "content": f"entry {item_id}",
            "created_at": FIXED_NOW - timedelta(hours=1),
            **fields,
        }
    )


async def test_a_resolved_entry_leaves_and_the_rest_move_up() -> None:
    """Once an entry is resolved it is gone, and the entry behind it is shown at its rank."""
    stores = Stores.in_memory()
    await stores.scratch_page.put(entry("first", priority=0.9))
    await stores.scratch_page.put(entry("second", priority=0.1, tags=("launch",)))
    orch = orchestrator(stores)
    before = await loaded(orch, scratch_page.SPEC, focus=("launch",))
    await stores.scratch_page.resolve(Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER), "second")
    after = await loaded(orch, scratch_page.SPEC, focus=("launch",))
    assert [(f.provenance.item_ids[0], f.rank) for f in before] == [("second", 0), ("first", 1)]
    assert [(f.provenance.item_ids[0], f.rank) for f in after] == [("first", 0)]


async def test_a_tenant_never_sees_scratch_entries_made_for_another() -> None:
    """After one user's turn, another user sees shared entries only, and another agent none."""
    stores = Stores.in_memory()
    await stores.scratch_page.put(entry("mine"))
    await stores.scratch_page.put(entry("ours", scope=Scope.SHARED, priority=0.1))
    orch = orchestrator(stores)
    owner = await loaded(orch, scratch_page.SPEC)
    other_user = await loaded(orch, scratch_page.SPEC, user_id="bob")
    other_agent = await loaded(orch, scratch_page.SPEC, agent_id="other")
    assert [f.provenance.item_ids[0] for f in owner] == ["mine", "ours"]
    assert [f.provenance.item_ids[0] for f in other_user] == ["ours"]
    assert other_agent == []


async def test_the_clock_and_the_requested_mode_are_their_own_fragments() -> None:
    """Another minute changes the clock alone; another mode asked for changes the mode alone."""
    stores = Stores.in_memory()
    await seed(stores)
    instant = [FIXED_NOW]
    orch = Orchestrator(stores, clock=lambda: instant[0], ids=counting_ids())
    now = await loaded(orch, consciousness.SPEC)
    instant[0] = FIXED_NOW + timedelta(minutes=1)
    later = await loaded(orch, consciousness.SPEC)
    focus = await loaded(orch, consciousness.SPEC, mode="focus")
    changed = [
        part for part, a, b in zip(consciousness.PARTS, now, later, strict=True) if a is not b
    ]
    assert changed == [consciousness.CLOCK]
    assert "10:01" in later[2].text
    moded = [part for part, a, b in zip(consciousness.PARTS, later, focus, strict=True) if a != b]
    assert moded == ["mode"]
    assert focus[3].text.startswith("Mode: focus")


async def test_a_new_profile_gives_new_fragments() -> None:
    """A profile put again with a new version is shown with it, in every part."""
    stores = Stores.in_memory()
    await seed(stores)
    orch = orchestrator(stores)
    before = await loaded(orch, consciousness.SPEC)
    changed = profile(DEMO_AGENT).model_copy(update={"version": 2})
    await stores.consciousness.put_profile(changed)
    after = await loaded(orch, consciousness.SPEC)
    assert [f.provenance.version for f in before] == ["1"] * len(before)
    assert [f.provenance.version for f in after] == ["2"] * len(after)


async def test_a_new_message_moves_the_others_to_new_places() -> None:
    """A message said since is the newest line; the others are ranked and placed anew."""
    stores = Stores.in_memory()
    await seed(stores)
    orch = orchestrator(stores)
    before = await loaded(orch, conversation.SPEC)
    said = ConversationTurn(
        item_id="newest",
        agent_id=DEMO_AGENT,
        user_id=DEMO_USER,
        session_id=DEMO_SESSION,
        role="user",
        speaker="Maya",
        content="One more thing",
        created_at=FIXED_NOW,
    )
    await stores.conversation.append(said)
    after = await loaded(orch, conversation.SPEC)
    lines = [f for f in after if f.role is not None]
    assert lines[-1].text == "Maya: One more thing"
    assert [(f.rank, f.position) for f in lines] == [
        (2 + len(lines) - 1 - n, n) for n in range(len(lines))
    ]
    assert after[0] is before[0]
    assert not {id(f) for f in lines} & {id(f) for f in before}
