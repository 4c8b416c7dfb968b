"""The pinning property: for any stored text and any budget, the owner's rules are whole in the
system message (``to_messages()``, as the servers and integrations hand it over), or no data is
delivered."""

from __future__ import annotations

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefrontal import BudgetBelowFloorError, Orchestrator, OrchestratorConfig, Stores
from prefrontal.config import MIN_TOKEN_BUDGET
from prefrontal.errors import ItemRejectedError
from prefrontal.phases.consciousness import governance_text
from prefrontal.stores.consciousness import AgentProfile, Governance
from prefrontal.turn import MAX_INPUT_CHARS, TurnRequest
from tests.security.pinning import MINI, NOW, data_fragments, rules, rules_whole_in_system, twin_of

BUDGETS = st.integers(min_value=MIN_TOKEN_BUDGET, max_value=6_000)
"""Budgets a caller may pick, from the smallest allowed to well past every floor here."""


@st.composite
def cases(draw: st.DrawFn) -> tuple[AgentProfile, str, int, bool]:
    """A profile with 1 to 60 rules, a text to store (often folding to its rules), a budget,
    and whether the caller chose that budget (else it is the configured one)."""
    count = draw(st.integers(min_value=1, max_value=60))
    profile = AgentProfile(
        agent_id=MINI.agent_id,
        name="Mini",
        governance=Governance(safety_policies=rules(count)),
        updated_at=NOW,
    )
    owner = governance_text(profile)
    stored = draw(
        st.one_of(
            st.text(min_size=1, max_size=600),
            st.sampled_from([owner, twin_of(owner), owner.lower(), f"{owner} {owner}"]),
            st.builds(lambda cut: twin_of(owner[:cut]), st.integers(1, len(owner))),
        )
    )
    return profile, stored, draw(BUDGETS), draw(st.booleans())


async def one_turn(profile: AgentProfile, stored: str, budget: int, chosen: bool) -> None:
    """Store ``stored`` for the agent's user, run a turn, check the property."""
    stores = Stores.in_memory()
    await stores.consciousness.put_profile(profile)
    config = OrchestratorConfig(deadline_ms=30_000, total_token_budget=budget)
    orch = Orchestrator(stores, config, clock=lambda: NOW)
    try:
        await orch.memory.remember(MINI, stored, store="episodic")
        await orch.memory.remember(MINI, stored, store="semantic")
    except (ItemRejectedError, ValueError):
        return  # text a store refuses (blank, too long) is not stored: nothing to check
    asked = f"What are the rules? {stored}"[:MAX_INPUT_CHARS]
    request = TurnRequest(
        agent_id=MINI.agent_id,
        user_id=MINI.user_id,
        session_id="property",
        user_input=asked,
        token_budget=budget if chosen else None,
    )
    try:
        result = await orch.start_turn(request)
    except BudgetBelowFloorError as error:
        refused: BudgetBelowFloorError | None = error
    else:
        refused = None
    if refused is not None:
        assert chosen and refused.floor > budget
        return
    messages = result.bundle.to_messages()
    whole = rules_whole_in_system(messages, profile)
    assert whole or not data_fragments(result.bundle)
    assert whole or not result.ready_for_router
    assert not chosen or whole
    assert result.bundle.total_tokens <= budget


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_the_rules_are_whole_in_the_system_message_or_no_data_is_delivered(
    case: tuple[AgentProfile, str, int, bool],
) -> None:
    """Any stored text, any budget: the rules whole in the system message, or no data (and not
    ready), or, for a budget the caller chose, a refusal naming a floor above it."""
    anyio.run(one_turn, *case)
