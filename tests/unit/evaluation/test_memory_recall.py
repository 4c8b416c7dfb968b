"""Memory recall in a real turn: a reply that shares no word with the question still comes."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefrontal import (
    ConversationConfig,
    Orchestrator,
    OrchestratorConfig,
    Section,
    TurnRequest,
)
from prefrontal.evaluation.ingest import ingest_turns
from prefrontal.evaluation.locomo import load
from prefrontal.evaluation.run import asked_at, context_policy, memory_stores
from prefrontal.stores.tenancy import Tenant

pytestmark = pytest.mark.anyio


async def test_the_reply_to_a_matching_turn_is_lifted_and_dated(sample_file: Path) -> None:
    """``A beagle, three months old.`` answers the turn that matches; it comes under its date."""
    conv = load(sample_file).conversations[0]
    tenant = Tenant(agent_id="listener", user_id=conv.sample_id)
    stores = memory_stores(None)
    await ingest_turns(stores, conv, tenant)
    config = OrchestratorConfig(
        total_token_budget=64,
        conversation=ConversationConfig(recent_turns=0),
        budget_policy=context_policy(64),
    )
    when = asked_at(conv)
    orchestrator = Orchestrator(stores, config, clock=lambda: when)
    request = TurnRequest(
        agent_id="listener", user_id=conv.sample_id, session_id="q", user_input="Which breed?"
    )
    result = await orchestrator.start_turn(request)
    memories = result.bundle.section(Section.EPISODIC)
    assert "test-1:D1:4" in {i for f in memories for i in f.provenance.item_ids}
    assert result.bundle.text.startswith("## Relevant memories\n[03 March 2024]\n")
    assert "Ben: A beagle, three months old." in result.bundle.text
    assert "marathon" not in result.bundle.text


async def test_a_recent_turn_the_conversation_cannot_fit_comes_as_a_memory(
    sample_file: Path,
) -> None:
    """With room for only the newest turns, an older one still comes, and only once."""
    conv = load(sample_file).conversations[0]
    tenant = Tenant(agent_id="listener", user_id=conv.sample_id)
    stores = memory_stores(None)
    await ingest_turns(stores, conv, tenant)
    config = OrchestratorConfig(
        total_token_budget=120,
        budget_policy=context_policy(120),
        conversation=ConversationConfig(recent_window_s=None),
    )
    when = asked_at(conv)
    orchestrator = Orchestrator(stores, config, clock=lambda: when)
    request = TurnRequest(
        agent_id="listener", user_id=conv.sample_id, session_id="q", user_input="Ben's puppy?"
    )
    text = (await orchestrator.start_turn(request)).bundle.text
    assert text.count("Ben: Great, I adopted a puppy called Biscuit.") == 1
    assert text.index("## Recent conversation") < text.index("## Relevant memories")
