"""The buffer inside whole turns: phase 10 fills it, later turns find it, phases 5/6 reuse it."""

from __future__ import annotations

import pytest

from prefrontal import Section, Stores
from prefrontal.buffer import Focus, ItemSource, NewItem, SessionBuffer
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT
from prefrontal.stores import SessionKey
from prefrontal.traces.models import PhaseRecord, TurnTrace
from tests.conftest import FIXED_NOW, demo_request, orchestrator

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=DEMO_SESSION)


def phase(trace: TurnTrace, name: str) -> PhaseRecord:
    return next(p for p in trace.phases if p.name == name)


async def test_a_turn_leaves_a_bounded_buffer_of_its_fragments(demo_stores: Stores) -> None:
    """Phase 10 holds the turn's fragments within bounds; identity is pinned; reasons are traced."""
    result = await orchestrator(demo_stores).start_turn(demo_request())
    wm = result.working_memory
    assert 0 < len(wm.items) <= 64
    assert wm.total_tokens == sum(i.tokens for i in wm.items) <= 4_000
    assert all(i.item_id and i.tokens >= 0 for i in wm.items)
    assert any(i.pinned and i.section == Section.CONSCIOUSNESS.value for i in wm.items)
    detail = phase(result.trace, "working_memory_init").detail
    assert detail["admitted"] == len(wm.items)
    assert all(r["reason"] for r in detail["refused"])
    assert wm.themes


async def test_the_next_turn_refreshes_what_the_session_holds(demo_stores: Stores) -> None:
    """A second turn of the session finds the saved buffer and refreshes rather than re-adds."""
    orch = orchestrator(demo_stores)
    first = await orch.start_turn(demo_request())
    second = await orch.start_turn(demo_request())
    assert phase(second.trace, "turn_context").detail["new_session"] is False
    detail = phase(second.trace, "working_memory_init").detail
    assert detail["refreshed"] > 0
    assert detail["admitted"] == 0
    assert detail["base_version"] == 1
    assert {i.item_id for i in second.working_memory.items} == {
        i.item_id for i in first.working_memory.items
    }


async def test_a_continuing_topic_reuses_the_buffer(demo_stores: Stores) -> None:
    """The same question again skips both searches, and the trace and counters say so."""
    orch = orchestrator(demo_stores)
    first = await orch.start_turn(demo_request())
    second = await orch.start_turn(demo_request())
    for name in ("episodic", "semantic"):
        assert phase(first.trace, name).detail["recall"] == "search"
        assert phase(second.trace, name).detail["recall"] == "reuse"
        assert phase(second.trace, name).detail["recall_reason"] == "topic_continues"
    assert second.working_memory.searches_saved == 2
    reused = {i for f in second.bundle.section(Section.EPISODIC) for i in f.provenance.item_ids}
    searched = {i for f in first.bundle.section(Section.EPISODIC) for i in f.provenance.item_ids}
    assert reused
    assert reused <= searched


async def test_the_recall_gate_can_be_turned_off(demo_stores: Stores) -> None:
    """With ``RecallConfig(gate=False)`` every turn searches."""
    orch = orchestrator(demo_stores, recall={"gate": False})
    await orch.start_turn(demo_request())
    second = await orch.start_turn(demo_request())
    assert phase(second.trace, "episodic").detail["recall_reason"] == "gate_off"
    assert second.working_memory.searches_saved == 0


async def test_other_users_and_sessions_start_their_own_buffer(demo_stores: Stores) -> None:
    """The same session id for another user, or another session, starts empty."""
    orch = orchestrator(demo_stores)
    await orch.start_turn(demo_request())
    for request in (demo_request(user_id="someone-else"), demo_request(session_id="other")):
        result = await orch.start_turn(request)
        assert phase(result.trace, "turn_context").detail["new_session"] is True
        assert phase(result.trace, "episodic").detail["recall_reason"] == "buffer_empty"


async def test_the_agents_own_items_outlive_the_turns(demo_stores: Stores) -> None:
    """A tool result the agent put in the buffer between turns is still there after the next."""
    orch = orchestrator(demo_stores)
    await orch.start_turn(demo_request())
    session = await SessionBuffer.load(demo_stores.working_memory, KEY)
    note = NewItem(
        content="Tool: the payment provider confirmed review on Dec 1.",
        source=ItemSource.EXTERNAL,
        item_id="tool-1",
        pinned=True,
    )
    await session.add(note)
    await session.save()
    result = await orch.start_turn(demo_request())
    kept = [i for i in result.working_memory.items if i.item_id == "tool-1"]
    assert len(kept) == 1
    assert kept[0].lifetime == "session"


async def test_a_new_session_on_the_same_topic_links_to_the_earlier_one(
    demo_stores: Stores,
) -> None:
    """A user's new session about the same things shows the earlier one as a continuation."""
    orch = orchestrator(demo_stores)
    await orch.start_turn(demo_request(session_id="morning"))
    result = await orch.start_turn(demo_request(session_id="afternoon"))
    links = result.working_memory.links
    assert [link.session_id for link in links] == ["morning"]
    assert links[0].relationship.value == "continuation"
    assert links[0].shared_themes
    detail = phase(result.trace, "working_memory_init").detail
    assert detail["links"][0]["session_id"] == "morning"
    other_user = await orch.start_turn(demo_request(session_id="evening", user_id="someone-else"))
    assert other_user.working_memory.links == ()


async def test_the_agents_items_are_the_contexts_working_notes(demo_stores: Stores) -> None:
    """What the agent keeps in the buffer is shown as working notes, and counts as used."""
    orch = orchestrator(demo_stores)
    await orch.start_turn(demo_request())
    session = await SessionBuffer.load(demo_stores.working_memory, KEY)
    added = await session.add(
        NewItem(
            content="Note: ask finance about the fallback payment provider.",
            item_id="note-1",
            source=ItemSource.REFLECTION,
            priority=0.9,
        ),
        focus=Focus(input_text=SAMPLE_INPUT),
        now=FIXED_NOW,
    )
    assert added.outcome.value == "admitted"
    await session.save()
    result = await orch.start_turn(demo_request())
    notes = result.bundle.section(Section.WORKING_MEMORY)
    assert [f.provenance.item_ids for f in notes] == [("note-1",)]
    assert "## Working notes" in result.bundle.text
    assert phase(result.trace, "turn_context").detail["notes"] == 1
    assert phase(result.trace, "working_memory_init").detail["notes_used"] == 1
    after = await SessionBuffer.load(demo_stores.working_memory, KEY)
    held = after.buffer.get("note-1")
    assert held is not None
    assert held.access_count == 2
    assert not any(i.item_id.startswith("working_memory:") for i in after.items)
