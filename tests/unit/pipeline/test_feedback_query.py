"""The feedback query in a real turn: a memory that shares no word with the input still comes."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from prefrontal import (
    ConversationConfig,
    Orchestrator,
    OrchestratorConfig,
    RecallConfig,
    Section,
    TurnRequest,
)
from prefrontal.phases.recall import _without_feedback
from prefrontal.retrieval.settings import RecallSettings
from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.set import Stores

pytestmark = pytest.mark.anyio

WHEN = datetime(2024, 3, 1, 12, tzinfo=UTC)
TEXTS = {
    "plan": "Next year I want to study counseling and psychology.",
    "course": "My counseling course starts soon; psychology is fascinating.",
    "hike": "We went hiking with the dog on Sunday.",
    "bread": "I baked bread with my sister.",
    "film": "The film last night was too long.",
}


def memory(key: str) -> MemoryItem:
    """One episodic memory of the test's user, said on ``WHEN``."""
    return MemoryItem(
        item_id=key,
        agent_id="agent",
        user_id="user",
        kind=MemoryKind.EVENT,
        content=TEXTS[key],
        occurred_at=WHEN,
        created_at=WHEN,
    )


async def recalled_with(feedback: bool) -> set[str]:
    stores = Stores.in_memory()
    await stores.episodic.put_many([memory(key) for key in TEXTS])
    config = OrchestratorConfig(
        total_token_budget=400,
        conversation=ConversationConfig(recent_turns=0),
        recall=RecallConfig(feedback=feedback),
    )
    orchestrator = Orchestrator(stores, config, clock=lambda: WHEN)
    request = TurnRequest(
        agent_id="agent", user_id="user", session_id="s", user_input="What will she study?"
    )
    result = await orchestrator.start_turn(request)
    await stores.aclose()
    return {i for f in result.bundle.section(Section.EPISODIC) for i in f.provenance.item_ids}


async def test_a_memory_sharing_only_the_best_hits_words_is_recalled() -> None:
    """With feedback on, "What will she study?" finds the plan; the course comes through its words."""
    recalled = await recalled_with(feedback=True)
    assert {"plan", "course"} <= recalled
    assert not recalled & {"hike", "bread", "film"}


async def test_feedback_is_off_by_default() -> None:
    """Without ``RecallConfig.feedback`` the course, which shares no word with the input, is not recalled."""
    recalled = await recalled_with(feedback=False)
    assert "plan" in recalled
    assert "course" not in recalled


async def test_turns_with_feedback_on_and_off_in_turn_each_recall_as_configured() -> None:
    """The settings without feedback are remembered; a turn with feedback on never gets them."""
    for feedback in (False, True, False, True):
        recalled = await recalled_with(feedback=feedback)
        assert ("course" in recalled) is feedback


@pytest.mark.parametrize("weight", [0.1, 0.3, 0.5])
def test_the_remembered_settings_without_feedback_are_those_settings_with_its_weight_0(
    weight: float,
) -> None:
    """Each distinct scoring setting has its own feedback-free settings, equal to a fresh copy."""
    settings = RecallSettings(feedback_weight=weight, context_weight=weight)
    expected = replace(settings, feedback_weight=0.0)
    assert _without_feedback(settings) == expected
    assert _without_feedback(replace(settings)) == expected
    assert _without_feedback(settings).context_weight == weight
