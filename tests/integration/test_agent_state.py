"""``AgentStateAPI`` (``orchestrator.agents``) on every backend: tenancy, versions, turns.

Two writers updating one goal at once: one wins, the other gets a
``ConflictError`` and nothing of its change is saved. Changes show in the
next turn's context and its trace.
"""

from __future__ import annotations

import anyio
import pytest

from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest
from prefrontal.agents import AgentStateAPI
from prefrontal.errors import ConflictError, NotFoundError
from prefrontal.handles import handle_of
from prefrontal.stores.frontal_cortex import FrontalStatus
from prefrontal.stores.tenancy import Tenant
from tests.conftest import fixed_clock, ticking_clock
from tests.servers.test_agent_loop import T0

pytestmark = pytest.mark.anyio

MAYA = Tenant(agent_id="atlas", user_id="maya")
SAM = Tenant(agent_id="atlas", user_id="sam")
OTHER = Tenant(agent_id="orion", user_id="maya")


async def test_concurrent_updates_of_one_goal_one_wins(stores: Stores) -> None:
    """Both read version 1 and update at once: exactly one saves, the other conflicts."""
    api = AgentStateAPI(stores, clock=fixed_clock)
    goal = await api.add_goal(MAYA, "Ship the launch", item_id="launch")
    outcomes: list[str] = []

    async def update(progress: float) -> None:
        try:
            await api.update_item(MAYA, "launch", expected_version=goal.version, progress=progress)
            outcomes.append(f"saved {progress}")
        except ConflictError:
            outcomes.append("conflict")

    async with anyio.create_task_group() as group:
        group.start_soon(update, 0.3)
        group.start_soon(update, 0.6)
    assert sorted(outcomes)[0] == "conflict"
    assert outcomes.count("conflict") == 1
    stored = await api.get_item(MAYA, "launch")
    assert stored.version == 2
    assert f"saved {stored.progress}" in outcomes


async def test_a_stale_version_is_refused_and_nothing_changes(stores: Stores) -> None:
    api = AgentStateAPI(stores, clock=fixed_clock)
    await api.add_goal(MAYA, "Ship", item_id="g")
    await api.update_item(MAYA, "g", expected_version=1, priority=0.9)
    with pytest.raises(ConflictError, match="version 2, not 1"):
        await api.complete(MAYA, "g", expected_version=1)
    assert (await api.get_item(MAYA, "g")).status is FrontalStatus.ACTIVE
    with pytest.raises(ConflictError):
        await api.add_goal(MAYA, "Again", item_id="g")


async def test_profile_versions_and_tenancy(stores: Stores) -> None:
    api = AgentStateAPI(stores, clock=fixed_clock)
    first = await api.set_profile(MAYA, name="Atlas", values=("Be brief.",))
    assert first.version == 1
    second = await api.set_profile(MAYA, expected_version=1, description="Plans launches.")
    assert (second.version, second.values, second.name) == (2, ("Be brief.",), "Atlas")
    with pytest.raises(ConflictError):
        await api.set_profile(MAYA, expected_version=1, name="Stale")
    with pytest.raises(ValueError, match="unknown profile field"):
        await api.set_profile(MAYA, colour="blue")
    assert await api.get_profile(OTHER) is None


async def test_items_belong_to_their_user(stores: Stores) -> None:
    api = AgentStateAPI(stores, clock=fixed_clock)
    await api.add_goal(MAYA, "Maya's goal", item_id="g")
    entry = await api.ask_confirmation(MAYA, "Book the venue?", item_id="c")
    for stranger in (SAM, OTHER):
        with pytest.raises(NotFoundError):
            await api.update_item(stranger, "g", progress=0.5)
        with pytest.raises(NotFoundError):
            await api.confirm(stranger, "c")
    confirmed = await api.confirm(MAYA, "c", expected_version=entry.version)
    assert (confirmed.resolved, confirmed.outcome, confirmed.version) == (True, "confirmed", 2)
    with pytest.raises(ValueError, match="cannot change"):
        await api.update_item(MAYA, "g", user_id="sam")


async def test_changes_show_in_the_next_turn_and_its_trace(stores: Stores) -> None:
    """A goal added, advanced and a risk noted between turns: the next turn shows and traces them."""
    orchestrator = Orchestrator(
        stores, OrchestratorConfig(deadline_ms=60_000), clock=ticking_clock(T0)
    )
    api = orchestrator.agents
    await api.set_profile(MAYA, name="Atlas")
    request = TurnRequest(agent_id="atlas", user_id="maya", session_id="s", user_input="Status?")
    first = await orchestrator.start_turn(request)
    await orchestrator.end_turn(first, "Nothing yet.")
    goal = await api.add_goal(MAYA, "Ship the launch", priority=0.9)
    await api.update_item(MAYA, goal.item_id, progress=0.4)
    risk = await api.note_risk(MAYA, "The venue may fall through.")
    second = await orchestrator.start_turn(request)
    assert second.ready_for_router
    text = second.bundle.text
    assert f"Goal {handle_of(goal)} (priority 0.9, 40% done): Ship the launch" in text
    assert f"Risk alert {handle_of(risk)} (agent): The venue may fall through." in text
    frontal = second.trace.phase("frontal_cortex").detail
    assert frontal["shown"] == [f"goal:{goal.item_id}@v2"]
    assert [(c["id"], c["version"], c["progress"]) for c in frontal["changed"]] == [
        (goal.item_id, 2, 0.4)
    ]
    scratch = second.trace.phase("scratch_page").detail
    assert scratch["new"] == [risk.item_id]
    await orchestrator.end_turn(second, "On it.")
    await api.complete(MAYA, goal.item_id)
    await api.resolve(MAYA, risk.item_id)
    third = await orchestrator.start_turn(request)
    assert f"Progress: goal {handle_of(goal)} 'Ship the launch' is now done" in third.bundle.text
    assert "venue" not in third.bundle.text
    (change,) = third.trace.phase("frontal_cortex").detail["changed"]
    assert (change["status"], change["version"]) == ("done", 3)
