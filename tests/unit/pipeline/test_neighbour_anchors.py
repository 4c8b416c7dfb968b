"""The neighbour lift: more matches lift their neighbours where the budget has room for them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from prefrontal import ConversationConfig, Orchestrator, OrchestratorConfig, Section, TurnRequest
from prefrontal.phases.memory_retrieve import anchor_count
from prefrontal.retrieval.settings import RecallSettings
from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.set import Stores

pytestmark = pytest.mark.anyio

WHEN = datetime(2024, 3, 1, 12, tzinfo=UTC)
THREADS = 20


def turn(thread: int, position: int, text: str) -> MemoryItem:
    """One message of the test user's conversation ``thread``."""
    return MemoryItem(
        item_id=f"t{thread:02d}-{position}",
        agent_id="agent",
        user_id="user",
        kind=MemoryKind.EVENT,
        content=text,
        occurred_at=WHEN,
        created_at=WHEN,
        thread_id=f"thread-{thread:02d}",
        position=position,
    )


async def recalled(items: list[MemoryItem], budget: int) -> set[str]:
    """The episodic ids in the context of a turn asking "kayaking" at ``budget`` (clock ``WHEN``)."""
    stores = Stores.in_memory()
    await stores.episodic.put_many(items)
    config = OrchestratorConfig(
        total_token_budget=budget, conversation=ConversationConfig(recent_turns=0)
    )
    orchestrator = Orchestrator(stores, config, clock=lambda: WHEN)
    request = TurnRequest(agent_id="agent", user_id="user", session_id="s", user_input="kayaking")
    result = await orchestrator.start_turn(request)
    await stores.aclose()
    return {i for f in result.bundle.section(Section.EPISODIC) for i in f.provenance.item_ids}


async def replies_recalled(budget: int) -> set[str]:
    """The replies (which share no word with the input) in a turn's context at ``budget``."""
    items = []
    for thread in range(THREADS):
        items.append(turn(thread, 0, f"Did you go kayaking on trip {thread}?"))
        items.append(turn(thread, 1, f"Yes, the river was calm on trip {thread}."))
    return {i for i in await recalled(items, budget) if i.endswith("-1")}


def test_the_anchor_count_grows_with_the_candidates_asked_for() -> None:
    """At least ``neighbour_anchors``; an eighth of the candidates when that is more."""
    settings = RecallSettings()
    assert anchor_count(50, settings) == 10
    assert anchor_count(100, settings) == 12
    assert anchor_count(200, settings) == 25
    assert anchor_count(200, RecallSettings(anchor_share=0.0)) == 10


async def test_a_larger_budget_lifts_the_replies_of_more_matches() -> None:
    """At 1,600 tokens ten matches bring their reply; at 4,000 all twenty do."""
    small, large = await replies_recalled(1_600), await replies_recalled(4_000)
    assert len(small) == 10
    assert len(large) == THREADS
    assert small < large


async def test_a_neighbour_live_at_the_turns_clock_is_lifted() -> None:
    """A reply that expired after the turn's (injected) time is still live for that turn."""
    reply = turn(0, 1, "Yes, the river was calm.").model_copy(
        update={"valid_until": WHEN + timedelta(days=30)}
    )
    assert await recalled([turn(0, 0, "Did you go kayaking?"), reply], 1_000) == {
        "t00-0",
        "t00-1",
    }


def test_an_anchor_shares_its_score_only_with_its_own_threads_neighbours() -> None:
    """Items at the same positions in another thread, or past the radius, get no share."""
    from prefrontal.phases.memory_retrieve import _by_thread, _factors

    settings = RecallSettings()
    radius = settings.neighbour_radius
    near = [turn(t, p, "x") for p in range(0, 2 * radius + 3) for t in (1, 2)]
    middle = radius + 1
    anchor = turn(1, middle, "anchor")
    shares = _factors(anchor, _by_thread(near).get(anchor.thread_id, []), settings)
    expected = [
        (f"t01-{p}", settings.neighbour_factor if p > middle else settings.neighbour_before_factor)
        for p in range(1, 2 * radius + 2)
        if p != middle
    ]
    assert shares == expected
    assert _factors(anchor, near, settings) == expected
    assert _factors(turn(3, 1, "alone"), near, settings) == []
