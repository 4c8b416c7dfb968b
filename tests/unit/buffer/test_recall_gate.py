"""The recall gate: reuse the buffer while the topic continues; the probe changes nothing."""

from __future__ import annotations

import pytest

from prefrontal.buffer import (
    BufferConfig,
    Focus,
    ItemProvenance,
    ItemSource,
    RecallMode,
    SessionBuffer,
    decide_recall,
)
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.memory import InMemoryMemoryStore, InMemoryWorkingMemoryStore
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey

from .conftest import Clock, at, item, words

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id="agent", user_id="alice", session_id="s1")
TENANT = Tenant(agent_id="agent", user_id="alice")


def test_an_empty_buffer_always_searches() -> None:
    """With nothing held there is no topic to continue."""
    decision = decide_recall(["m1"], [])
    assert decision.mode is RecallMode.SEARCH
    assert decision.reason == "buffer_empty"


def test_a_probe_that_finds_nothing_searches() -> None:
    """No probe hits is no evidence of continuity."""
    assert decide_recall([], ["m1"]).reason == "probe_found_nothing"


def test_enough_overlap_reuses_the_buffer() -> None:
    """Two of three probe hits held (>= 0.6) means the topic continues."""
    decision = decide_recall(["m1", "m2", "m9"], ["m1", "m2", "m3"])
    assert decision.reuse
    assert decision.reason == "topic_continues"
    assert decision.overlap == pytest.approx(2 / 3)
    assert decision.held_ids == ("m1", "m2", "m3")


def test_too_little_overlap_searches() -> None:
    """One of three probe hits held means the topic changed."""
    decision = decide_recall(["m1", "m8", "m9"], ["m1", "m2"])
    assert decision.mode is RecallMode.SEARCH
    assert decision.reason == "topic_changed"


async def _world() -> tuple[InMemoryMemoryStore, SessionBuffer]:
    memory = InMemoryMemoryStore("episodic")
    texts = {
        "m1": "Booked flights to Lisbon for the family vacation",
        "m2": "Hotel in Lisbon near the river for the vacation",
        "m3": "Vacation budget agreed with mom",
        "m4": "Quarterly tax forms are due in April",
    }
    for item_id, text in texts.items():
        await memory.put(
            MemoryItem(
                item_id=item_id, agent_id="agent", user_id="alice", content=text, created_at=at(0)
            )
        )
    session = await SessionBuffer.load(
        InMemoryWorkingMemoryStore(),
        KEY,
        count_tokens=words,
        config=BufferConfig(base_threshold=0.0),
        clock=Clock(),
    )
    fragments = [
        item(
            texts[i],
            item_id=f"frag-{i}",
            source=ItemSource.MEMORY_RETRIEVAL,
            provenance=ItemProvenance(store="episodic", item_ids=(i,)),
        )
        for i in ("m1", "m2", "m3")
    ]
    await session.refresh_turn(fragments, focus=Focus(input_text="vacation"), now=at(0))
    return memory, session


async def test_a_continuing_topic_saves_a_search() -> None:
    """A follow-up on the same topic reuses the buffer and counts one search saved."""
    memory, session = await _world()
    decision = await session.recall_gate(memory, "episodic", "Lisbon vacation hotel", now=at(5))
    assert decision.reuse
    assert set(decision.held_ids) == {"m1", "m2", "m3"}
    assert session.buffer.recall_counters.saved == 1
    assert session.buffer.recall_counters.searches == 0


@pytest.mark.parametrize("text", ["Lisbon vacation hotel", "tax forms April"])
async def test_held_ids_given_by_the_caller_decide_as_the_buffers_own(text: str) -> None:
    """Handing the gate the held ids it would read itself changes neither decision nor counters."""
    memory, session = await _world()
    _, other = await _world()
    held = sorted(other.buffer.held_memory_ids("episodic"))
    given = await other.recall_gate(memory, "episodic", text, now=at(5), held=held)
    assert given == await session.recall_gate(memory, "episodic", text, now=at(5))
    assert other.buffer.recall_counters == session.buffer.recall_counters


async def test_a_new_topic_searches_and_is_counted() -> None:
    """A change of topic runs the full search, and the counters say so."""
    memory, session = await _world()
    decision = await session.recall_gate(memory, "episodic", "tax forms April", now=at(5))
    assert decision.mode is RecallMode.SEARCH
    assert session.buffer.recall_counters.searches == 1


async def test_another_stores_items_do_not_count_as_held() -> None:
    """Items retrieved from episodic memory are not evidence for the semantic store."""
    memory, session = await _world()
    decision = await session.recall_gate(memory, "semantic", "Lisbon vacation", now=at(5))
    assert decision.reason == "buffer_empty"


async def test_the_probe_changes_nothing_it_reads() -> None:
    """The probe is a search only: no recall counts, no timestamps, no items change."""
    memory, session = await _world()
    before = await memory.get(TENANT, ["m1", "m2", "m3", "m4"])
    await session.recall_gate(memory, "episodic", "Lisbon vacation hotel", now=at(5))
    await session.recall_gate(memory, "episodic", "tax forms", now=at(6))
    assert await memory.get(TENANT, ["m1", "m2", "m3", "m4"]) == before


async def test_counters_survive_the_save() -> None:
    """Searches saved are part of the session's saved state."""
    memory, session = await _world()
    await session.recall_gate(memory, "episodic", "Lisbon vacation hotel", now=at(5))
    await session.save(now=at(6))
    again = await SessionBuffer.load(session.store, KEY, count_tokens=words, clock=Clock())
    assert again.buffer.recall_counters.saved == 1


async def test_the_sessions_own_exchanges_count_as_held() -> None:
    """Probe hits that are the session's own messages (written to episodic memory by end_turn
    under their message ids) count as held: the topic continues; a reuse returns memories only."""
    memory, session = await _world()
    said = {
        "t1:user": "Which Lisbon vacation hotel did we book?",
        "t1:reply": "The Lisbon vacation hotel near the river.",
    }
    for item_id, text in said.items():
        await memory.put(
            MemoryItem(
                item_id=item_id, agent_id="agent", user_id="alice", content=text, created_at=at(1)
            )
        )
    held = [i for i in session.items if i.source is ItemSource.MEMORY_RETRIEVAL]
    again = [
        item(i.content, item_id=i.item_id, source=i.source, provenance=i.provenance) for i in held
    ]
    exchanges = [
        item(
            text,
            item_id=f"conversation:{item_id}",
            source=ItemSource.USER_INPUT,
            provenance=ItemProvenance(store="conversation", item_ids=(item_id,)),
        )
        for item_id, text in said.items()
    ]
    await session.refresh_turn(
        [*again, *exchanges], focus=Focus(input_text="Lisbon vacation hotel"), now=at(2)
    )
    decision = await session.recall_gate(memory, "episodic", "Lisbon vacation hotel", now=at(5))
    assert set(decision.probe_ids) & set(said)
    assert decision.reuse and decision.reason == "topic_continues"
    assert not set(decision.held_ids) & set(said)
