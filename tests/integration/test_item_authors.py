"""Goals, actions and scratch entries record who wrote them, and the context says so, on every
backend."""

from __future__ import annotations

import pytest

from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest
from prefrontal.agents import AgentStateAPI
from prefrontal.stores.authors import AGENT, OWNER
from prefrontal.stores.frontal_cortex import FrontalKind, FrontalStatus
from prefrontal.stores.scratch_page import ScratchKind
from prefrontal.stores.tenancy import Scope, Tenant
from tests.conftest import fixed_clock, ticking_clock
from tests.servers.test_agent_loop import T0
from tests.servers.test_agent_rights import unhandled

pytestmark = pytest.mark.anyio

MAYA = Tenant(agent_id="atlas", user_id="maya")
SAM = Tenant(agent_id="atlas", user_id="sam")


async def test_the_author_is_recorded_and_the_last_named_writer_replaces_it(stores: Stores) -> None:
    """Stored with the item; a change by another named writer records it, one without a name
    keeps it; completing and resolving record their writer too."""
    api = AgentStateAPI(stores, clock=fixed_clock)
    goal = await api.add_item(MAYA, FrontalKind.GOAL, "Ship", scope=Scope.SHARED, author="curator")
    assert (await api.get_item(MAYA, goal.item_id)).author == "curator"
    await api.update_item(MAYA, goal.item_id, progress=0.5, author="editor")
    assert (await api.get_item(MAYA, goal.item_id)).author == "editor"
    await api.update_item(MAYA, goal.item_id, progress=0.6)
    assert (await api.get_item(MAYA, goal.item_id)).author == "editor"
    done = await api.complete(MAYA, goal.item_id, author="closer")
    assert (done.status, (await api.get_item(MAYA, goal.item_id)).author) == (
        FrontalStatus.DONE,
        "closer",
    )
    entry = await api.note_risk(MAYA, "The venue may cancel.", author="maya-web")
    resolved = await api.resolve(MAYA, entry.item_id, author="curator")
    assert (entry.author, resolved.author) == ("maya-web", "curator")
    assert (await api.get_entry(MAYA, entry.item_id)).author == "curator"


async def test_an_update_cannot_make_a_private_item_shared(stores: Stores) -> None:
    """The scope is fixed by the write: a change cannot move an item into every user's turns."""
    api = AgentStateAPI(stores, clock=fixed_clock)
    goal = await api.add_goal(MAYA, "Maya's own errand")
    with pytest.raises(ValueError, match="cannot change scope"):
        await api.update_item(MAYA, goal.item_id, scope=Scope.SHARED)


async def test_the_context_says_who_wrote_each_goal_and_entry(stores: Stores) -> None:
    """Items users shared name their writer (or the user), items a key wrote last name the key
    (the agent's own included), the agent's own side carries no label."""
    config = OrchestratorConfig.model_validate(
        {"deadline_ms": 60_000, "frontal_cortex": {"active_goals": 10}}
    )
    orchestrator = Orchestrator(stores, config, clock=ticking_clock(T0))
    api = orchestrator.agents
    await api.set_profile(MAYA, name="Atlas")
    await api.add_item(MAYA, FrontalKind.GOAL, "Team goal", scope=Scope.SHARED, author="curator")
    await api.add_item(MAYA, FrontalKind.GOAL, "File goal", for_agent=True, author=OWNER)
    moved = await api.add_item(MAYA, FrontalKind.GOAL, "Moved goal", for_agent=True, author=OWNER)
    await api.update_item(MAYA, moved.item_id, progress=0.5, author="curator")
    await api.add_item(SAM, FrontalKind.GOAL, "Old shared goal", scope=Scope.SHARED)
    await api.add_item(MAYA, FrontalKind.ACTION, "Key action", author="maya-web")
    await api.add_item(MAYA, FrontalKind.GOAL, "Own goal", priority=0.4, author=AGENT)
    await api.add_goal(MAYA, "App goal", priority=0.3)
    await api.note_risk(MAYA, "Key risk.", author="maya-web")
    await api.note_risk(MAYA, "Agent risk.", author=AGENT, priority=0.7)
    await api.note(MAYA, "Team note.", kind=ScratchKind.OBSERVATION, scope=Scope.SHARED)
    request = TurnRequest(agent_id="atlas", user_id="maya", session_id="s", user_input="Status?")
    text = unhandled((await orchestrator.start_turn(request)).bundle.text)
    for line in (
        "Goal (shared by curator, priority 0.5): Team goal",
        "Goal (priority 0.5): File goal",
        "Goal (by curator, priority 0.5, 50% done): Moved goal",
        "Goal (shared by sam, priority 0.5): Old shared goal",
        "Action (by maya-web, priority 0.5, owner agent): Key action",
        "Goal (priority 0.4): Own goal",
        "Goal (priority 0.3): App goal",
        "Risk alert (by maya-web): Key risk.",
        "Risk alert (agent): Agent risk.",
        "Observation (shared by maya): Team note.",
    ):
        assert line in text, (line, text)
