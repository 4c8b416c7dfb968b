"""Phases one at a time, on a hand-built turn state."""

from __future__ import annotations

from datetime import timedelta

import pytest

from prefrontal import Orchestrator, Section, Stores
from prefrontal.budgets.tokens import default_counter
from prefrontal.buffer.models import MAX_ITEM_ID, NewItem
from prefrontal.bundle.models import Fragment, Provenance
from prefrontal.bundle.render import render_sections
from prefrontal.phases import (
    PHASES,
    budget_allocation,
    context_assembly,
    conversation,
    frontal_cortex,
    scratch_page,
)
from prefrontal.phases.session import MEMORY_SECTIONS, fragment_item_id, offer
from prefrontal.phases.state import TurnState
from prefrontal.stores import (
    ConversationTurn,
    FrontalItem,
    FrontalKind,
    FrontalStatus,
    Observation,
    Role,
    ScratchKind,
)
from tests.conftest import FIXED_NOW, demo_request, orchestrator

pytestmark = pytest.mark.anyio


def new_turn(orch: Orchestrator, **request: object) -> TurnState:
    return orch._new_turn(demo_request(**request))


def test_the_phase_tuple_is_the_specification_graph() -> None:
    """Eleven phases; 2, 3, 4, 7 need only 1; 5 needs 2, 3 and 4, 6 needs 3 and 4; 8-11 are a chain."""
    needs = {p.name: set(p.needs) for p in PHASES}
    for name in ("consciousness", "frontal_cortex", "conversation", "scratch_page"):
        assert needs[name] == {"turn_context"}
    assert needs["episodic"] == {"consciousness", "frontal_cortex", "conversation"}
    assert needs["semantic"] == {"frontal_cortex", "conversation"}
    assert needs["context_assembly"] == {"budget_allocation"}
    assert [p.loads for p in PHASES] == [True] * 7 + [False] * 4


async def test_goals_are_ranked_blocking_and_urgent_first() -> None:
    """Among equally relevant goals, higher priority then blocking then sooner due comes first."""
    stores = Stores.in_memory()
    items = [
        ("low", 0.2, False, 1),
        ("urgent", 0.9, True, 2),
        ("high-late", 0.9, False, 30),
        ("high-soon", 0.9, False, 3),
    ]
    for item_id, priority, blocking, due in items:
        await stores.frontal_cortex.put(
            FrontalItem(
                item_id=item_id,
                agent_id="atlas",
                user_id="maya",
                kind=FrontalKind.GOAL,
                title=f"goal {item_id}",
                priority=priority,
                blocking=blocking,
                due_at=FIXED_NOW + timedelta(days=due),
            )
        )
    await stores.frontal_cortex.put(
        FrontalItem(
            item_id="done",
            agent_id="atlas",
            user_id="maya",
            kind=FrontalKind.GOAL,
            title="finished",
            status=FrontalStatus.DONE,
        )
    )
    turn = new_turn(orchestrator(stores), user_input="unrelated words")
    await frontal_cortex.run(turn)
    ids = [f.provenance.item_ids[0] for f in turn.loads[Section.FRONTAL_CORTEX]]
    assert ids == ["urgent", "high-soon", "high-late", "low"]


async def test_goal_count_is_cut_to_the_configured_limit() -> None:
    """At most ``FrontalCortexConfig.active_goals`` goals are loaded; the rest count as dropped."""
    stores = Stores.in_memory()
    for n in range(8):
        await stores.frontal_cortex.put(
            FrontalItem(
                item_id=f"g{n}",
                agent_id="atlas",
                user_id="maya",
                kind=FrontalKind.GOAL,
                title=f"goal {n}",
            )
        )
    turn = new_turn(orchestrator(stores, frontal_cortex={"active_goals": 5}))
    outcome = await frontal_cortex.run(turn)
    assert outcome.items_loaded == 5
    assert outcome.items_dropped == 3


async def test_earlier_sessions_are_recent_conversation_only_within_the_window() -> None:
    """This session's turns always show; another session's only when said within the window."""
    stores = Stores.in_memory()
    said = [
        ("old-other", "yesterday", timedelta(days=1)),
        ("fresh-other", "earlier", timedelta(minutes=20)),
        ("old-same", "s1", timedelta(days=2)),
    ]
    for item_id, session_id, ago in said:
        await stores.conversation.append(
            ConversationTurn(
                item_id=item_id,
                agent_id="atlas",
                user_id="maya",
                session_id=session_id,
                role=Role.USER,
                content=f"turn {item_id}",
                created_at=FIXED_NOW - ago,
            )
        )
    shown = {}
    for window in (3_600, None):
        turn = new_turn(
            orchestrator(stores, conversation={"recent_window_s": window}), session_id="s1"
        )
        await conversation.run(turn)
        fragments = turn.loads[Section.CONVERSATION]
        shown[window] = {f.provenance.item_ids[0] for f in fragments}
    assert shown[3_600] == {"fresh-other", "old-same"}
    assert shown[None] == {"old-other", "fresh-other", "old-same"}


async def test_scratch_page_puts_risk_alerts_first() -> None:
    """Risk alerts and pending confirmations come before observations, whatever their priority."""
    stores = Stores.in_memory()
    entries = [
        ("obs", ScratchKind.OBSERVATION, 0.99),
        ("risk", ScratchKind.RISK_ALERT, 0.1),
        ("confirm", ScratchKind.PENDING_CONFIRMATION, 0.5),
    ]
    for item_id, kind, priority in entries:
        await stores.scratch_page.put(
            Observation(
                item_id=item_id,
                agent_id="atlas",
                user_id="maya",
                kind=kind,
                content=item_id,
                priority=priority,
            )
        )
    turn = new_turn(orchestrator(stores))
    await scratch_page.run(turn)
    assert [f.provenance.item_ids[0] for f in turn.loads[Section.SCRATCH_PAGE]] == [
        "confirm",
        "risk",
        "obs",
    ]


async def test_allocation_gives_a_failed_sections_share_away(demo_stores: Stores) -> None:
    """Phase 8 demands nothing for a section that loaded nothing, so others get more."""
    orch = orchestrator(demo_stores)
    turn = new_turn(orch, token_budget=600)
    for spec in PHASES[:7]:
        await spec.run(turn)
    await budget_allocation.run(turn)
    with_conversation = dict(turn.allocation)
    turn.loads[Section.CONVERSATION] = []
    await budget_allocation.run(turn)
    assert turn.allocation["conversation"] == 0
    assert sum(turn.allocation.values()) >= sum(with_conversation.values()) - 1


async def test_assembly_fits_the_rendered_text_and_reports_drops(demo_stores: Stores) -> None:
    """Phase 9 keeps within the available budget with the real tokenizer and records what it dropped."""
    turn = new_turn(orchestrator(demo_stores), token_budget=300)
    for spec in PHASES[:8]:
        await spec.run(turn)
    await context_assembly.run(turn)
    assert turn.bundle is not None
    assert default_counter().count(turn.bundle.text) <= turn.policy.available
    assert turn.bundle.text == render_sections(turn.bundle.fragments)
    assert turn.dropped and all(d.reason for d in turn.dropped)
    kept = {i for f in turn.bundle.fragments for i in f.provenance.item_ids}
    given_up = [d for d in turn.dropped if not d.reason.startswith("trimmed")]
    assert not kept & {i for d in given_up for i in d.item_ids}


async def test_duplicate_text_is_kept_once(demo_stores: Stores) -> None:
    """The same text loaded by two sections appears once, in the earlier section."""
    turn = new_turn(orchestrator(demo_stores))
    for spec in PHASES[:7]:
        await spec.run(turn)
    twin = turn.loads[Section.EPISODIC][0].model_copy(
        update={"section": Section.SEMANTIC, "rank": -1}
    )
    turn.loads[Section.SEMANTIC] = [twin, *turn.loads[Section.SEMANTIC]]
    await budget_allocation.run(turn)
    await context_assembly.run(turn)
    assert turn.bundle is not None
    assert turn.bundle.text.count(twin.text) == 1
    assert any(d.reason.startswith("duplicate of") for d in turn.dropped)


def test_a_fragment_of_many_items_is_held_under_an_id_of_bounded_length() -> None:
    """Section and ids joined while short enough; past 256 characters, a hash of the ids:
    the same ids give the same id, other ids another, and the buffer takes the item."""
    many = tuple(f"episode-{n:04d}" for n in range(40))
    assert fragment_item_id(Section.EPISODIC, ("a", "b")) == "episodic:a|b"
    long_id = fragment_item_id(Section.EPISODIC, many)
    assert len(long_id) <= MAX_ITEM_ID
    assert long_id.startswith("episodic:#")
    assert long_id == fragment_item_id(Section.EPISODIC, many)
    assert long_id != fragment_item_id(Section.EPISODIC, many[1:])
    assert long_id != fragment_item_id(Section.SEMANTIC, many)
    provenance = Provenance(store="episodic", item_ids=many, phase="episodic", score=0.5)
    fragment = Fragment(
        section=Section.EPISODIC, text="forty episodes", tokens=3, provenance=provenance
    )
    offered = offer(fragment)
    assert offered.item_id == long_id
    assert offered.provenance.item_ids == many


@pytest.mark.parametrize("section", list(Section))
@pytest.mark.parametrize("score", [None, -0.5, 0.0, 0.42, 1.0, 3.0, float("inf")])
def test_a_fragment_offered_to_the_buffer_is_the_item_validation_makes(
    section: Section, score: float | None
) -> None:
    """The offer assembled from a fragment validates again to itself, its score clamped."""
    provenance = Provenance(store="s", item_ids=("a", "b"), phase="p", score=score)
    fragment = Fragment(section=section, text="a fragment", tokens=2, provenance=provenance)
    offered = offer(fragment)
    assert NewItem.model_validate(offered.model_dump()) == offered
    again = offer(fragment.model_copy(update={"rank": 3}))
    assert again == offered
    assert (again is offered) is (section not in MEMORY_SECTIONS)  # memories: made anew
    if section in (Section.EPISODIC, Section.SEMANTIC) and score is not None:
        assert offered.relevance == offered.priority == min(max(score, 0.0), 1.0)


def test_a_memory_fragment_whose_score_is_not_a_number_is_offered_at_zero() -> None:
    provenance = Provenance(store="s", item_ids=("a",), phase="p", score=float("nan"))
    fragment = Fragment(section=Section.SEMANTIC, text="a fact", tokens=2, provenance=provenance)
    offered = offer(fragment)
    assert offered.priority == offered.relevance == 0.0


@pytest.mark.parametrize("section", list(Section))
def test_an_offer_made_for_a_turn_is_the_offer_the_buffer_stamps_with_it(section: Section) -> None:
    """A memory's offer made for a turn names it in its provenance (what the buffer's refresh
    stamps on what it admits or refreshes); other offers are the ones remembered."""
    provenance = Provenance(store="s", item_ids=("a",), phase="p", score=0.7)
    fragment = Fragment(section=section, text="a fragment", tokens=2, provenance=provenance)
    plain, made = offer(fragment), offer(fragment, "turn-2")
    assert NewItem.model_validate(made.model_dump()) == made
    if section in MEMORY_SECTIONS:
        stamped = plain.provenance.model_copy(update={"turn_id": "turn-2"})
        assert made == plain.model_copy(update={"provenance": stamped})
    else:
        assert made is plain
