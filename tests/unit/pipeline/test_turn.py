"""A whole turn on the demo data: bundle, budget, provenance, determinism, tenancy."""

from __future__ import annotations

import pytest

from prefrontal import PhaseStatus, Section, Stores, TurnStatus
from prefrontal.budgets.tokens import default_counter
from prefrontal.bundle.models import SECTION_ORDER
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.errors import StoreError
from prefrontal.orchestrator.runner import run_phases
from prefrontal.phases import PHASE_NAMES, PHASES
from prefrontal.phases.state import TurnState
from prefrontal.stores import Tenant
from prefrontal.testing.doubles import FailingStore
from prefrontal.traces.models import TurnTrace
from prefrontal.traces.seal import sealing
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio


async def test_a_turn_runs_all_eleven_phases_in_order(demo_stores: Stores) -> None:
    """Every phase is recorded, in the specification's order, and all end ok on healthy stores."""
    result = await orchestrator(demo_stores).start_turn(demo_request())
    assert tuple(p.name for p in result.trace.phases) == PHASE_NAMES
    assert [p.index for p in result.trace.phases] == list(range(1, 12))
    assert all(p.status is PhaseStatus.OK for p in result.trace.phases)
    assert result.trace.status is TurnStatus.OK
    assert result.ready_for_router


async def test_every_loaded_section_is_in_the_bundle_in_fixed_order(demo_stores: Stores) -> None:
    """The bundle holds identity, goals, conversation, memories and scratch, in that order."""
    result = await orchestrator(demo_stores).start_turn(demo_request())
    sections = [f.section for f in result.bundle.fragments]
    present = list(dict.fromkeys(sections))
    assert present == [s for s in SECTION_ORDER if s in present]
    for section in (
        Section.CONSCIOUSNESS,
        Section.FRONTAL_CORTEX,
        Section.CONVERSATION,
        Section.EPISODIC,
        Section.SEMANTIC,
        Section.SCRATCH_PAGE,
    ):
        assert section in present, section
    assert result.bundle.text.index("## Identity") < result.bundle.text.index("## Goals")


async def test_fragments_carry_provenance_and_true_token_counts(demo_stores: Stores) -> None:
    """Each fragment names its store, items and phase, and its tokens are the real count of its text."""
    result = await orchestrator(demo_stores).start_turn(demo_request())
    counter = default_counter()
    for fragment in result.bundle.fragments:
        assert fragment.provenance.store == fragment.section.value
        assert fragment.provenance.item_ids
        assert fragment.provenance.phase in PHASE_NAMES
        assert fragment.tokens == counter.count(fragment.text)
        assert fragment.text in result.bundle.text


@pytest.mark.parametrize("budget", [64, 150, 400, 1_000, 2_000, 4_000, 16_000])
async def test_rendered_text_never_exceeds_the_budget(demo_stores: Stores, budget: int) -> None:
    """The rendered context, counted with the real tokenizer, is within the turn's budget
    (the configured one: below the owner's floor the turn is served without data)."""
    result = await orchestrator(demo_stores, total_token_budget=budget).start_turn(demo_request())
    assert result.bundle.total_tokens == default_counter().count(result.bundle.text)
    assert result.bundle.total_tokens <= budget
    assert result.bundle.budget == budget


async def test_source_breakdown_adds_up(demo_stores: Stores) -> None:
    """The source breakdown gives each section's fragment tokens."""
    result = await orchestrator(demo_stores).start_turn(demo_request())
    for section, tokens in result.bundle.source_breakdown.items():
        assert tokens == sum(f.tokens for f in result.bundle.section(section))


async def test_same_request_and_stores_give_the_same_bundle() -> None:
    """With an injected clock and ids, two turns over equal stores are identical, checksum included."""
    results = []
    for _ in range(2):
        stores = Stores.in_memory()
        await seed(stores)
        results.append(await orchestrator(stores).start_turn(demo_request()))
    first, second = results
    assert first.bundle == second.bundle
    assert first.bundle.checksum == second.bundle.checksum


async def test_the_checksum_changes_with_the_content(demo_stores: Stores) -> None:
    """A different input that selects different memories gives a different checksum."""
    a = await orchestrator(demo_stores).start_turn(demo_request())
    b = await orchestrator(demo_stores).start_turn(
        demo_request(user_input="Who is vegetarian at the offsite?")
    )
    assert a.bundle.checksum != b.bundle.checksum


async def test_another_agent_and_another_user_see_nothing_of_the_demo(demo_stores: Stores) -> None:
    """Tenancy: a turn for another agent, or another user of the same agent, gets no private item."""
    other_agent = await orchestrator(demo_stores).start_turn(demo_request(agent_id="someone-else"))
    assert other_agent.bundle.fragments == ()
    other_user = await orchestrator(demo_stores).start_turn(demo_request(user_id="intruder"))
    private_sections = {
        Section.FRONTAL_CORTEX,
        Section.CONVERSATION,
        Section.EPISODIC,
        Section.SCRATCH_PAGE,
    }
    assert not [f for f in other_user.bundle.fragments if f.section in private_sections]
    shared = other_user.bundle.section(Section.SEMANTIC)
    assert shared, "facts shared with every user of the agent are visible"
    assert all(f.provenance.item_ids[0] in SHARED_FACT_IDS for f in shared)


SHARED_FACT_IDS = {"fact-00", "fact-01", "fact-05", "fact-07", "fact-09"}


async def test_the_trace_is_written_and_matches_the_result(demo_stores: Stores) -> None:
    """Phase 11 writes the sealed trace; the result carries the same trace."""
    result = await orchestrator(demo_stores).start_turn(demo_request())
    stored = await demo_stores.traces.get(_tenant(), result.context.turn_id)
    assert stored == result.trace
    assert stored.checksum == result.bundle.checksum
    assert stored.total_tokens == result.bundle.total_tokens


async def test_the_working_memory_buffer_is_filled_and_bounded(demo_stores: Stores) -> None:
    """Phase 10 fills the session buffer within its item and token bounds."""
    result = await orchestrator(demo_stores, buffer={"max_items": 8, "max_tokens": 300}).start_turn(
        demo_request()
    )
    wm = result.working_memory
    assert 0 < len(wm.items) <= 8
    assert wm.total_tokens == sum(i.tokens for i in wm.items) <= 300


async def test_a_second_turn_sees_the_parent_turn(demo_stores: Stores) -> None:
    """A turn that names its parent loads the parent's outcome into the conversation section."""
    orch = orchestrator(demo_stores)
    first = await orch.start_turn(demo_request())
    second = await orch.start_turn(demo_request(parent_turn_id=first.context.turn_id))
    conversation = second.bundle.section(Section.CONVERSATION)
    assert any(f"trace:{first.context.turn_id}" in f.provenance.item_ids for f in conversation)


async def test_messages_put_the_conversation_in_roles(demo_stores: Stores) -> None:
    """``to_messages`` gives one system message and the recent turns with user/assistant roles."""
    result = await orchestrator(demo_stores).start_turn(demo_request())
    messages = result.bundle.to_messages()
    assert messages[0]["role"] == "system"
    assert "## Identity and rules" in messages[0]["content"]
    roles = {m["role"] for m in messages[1:]}
    assert {"user", "assistant"} <= roles


def _tenant() -> Tenant:
    return Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)


def _sealed_in_two_steps(turn: TurnState) -> TurnTrace:
    """The trace as it was first built, then copied with what the phase records add up to."""
    opened = turn._trace(status=TurnStatus.OK, ready_for_router=turn.bundle is not None, phases=())
    sealed = sealing(turn.records.values())
    return opened.model_copy(
        update={
            "phases": sealed.phases,
            "status": sealed.status,
            "warnings": sealed.warnings,
            "errors": sealed.errors,
        }
    )


async def test_the_sealed_trace_is_the_open_trace_sealed_with_the_readiness_added(
    demo_stores: Stores,
) -> None:
    """Built at once, the sealed trace equals the open one sealed, field for field and in JSON."""
    failing = FailingStore(demo_stores.consciousness, StoreError("down", store="consciousness"))
    turns = orchestrator(demo_stores.replace(consciousness=failing))
    turn = turns._new_turn(demo_request())
    await run_phases(PHASES, turn, sequential=True)
    built = turn.seal_trace(turn.records.values())
    opened = _sealed_in_two_steps(turn)
    notes = tuple(w for w in built.warnings if w.startswith("finalize: not ready"))
    assert notes and not built.ready_for_router
    expected = opened.model_copy(
        update={"ready_for_router": False, "warnings": opened.warnings + notes}
    )
    timeless = {"duration_ms"}  # the turn's time so far, read anew by each
    assert built.model_dump_json(exclude=timeless) == expected.model_dump_json(exclude=timeless)
    assert (
        built.model_fields_set
        == expected.model_fields_set
        == set(TurnTrace.model_fields) - {"ending", "forgotten"}
    )
