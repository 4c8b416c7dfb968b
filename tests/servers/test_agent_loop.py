"""A 20-turn conversation in which the agent steers its own goal through the MCP tools.

At turn 2 it sets a goal, at turn 5 advances it, at turn 12 completes it;
every turn's context and trace show the goal as it stood when the turn
started. On every backend (in memory, SQLite, PostgreSQL), through the MCP
SDK's own client connected in-process.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from prefrontal import Orchestrator, OrchestratorConfig, Stores
from prefrontal.agents.file import apply, load
from prefrontal.serving.mcp_tools import build_mcp
from prefrontal.serving.service import Service
from prefrontal.stores.frontal_cortex import FrontalItem
from prefrontal.stores.tenancy import Tenant
from tests.conftest import ticking_clock

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent.toml"
TENANT = Tenant(agent_id="atlas", user_id="maya")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
GOAL = "Book the venue for the launch party"


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call ``tool``; its structured result (the call must succeed)."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    structured = result.structured_content
    if structured is None:  # pragma: no cover - every tool returns a model
        structured = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return dict(structured)


def expected(turn: int, handle: str) -> tuple[str | None, int | None]:
    """The goal's line in turn ``turn``'s context, and the version its trace shows."""
    if 3 <= turn <= 5:
        return f"Goal {handle} (priority 0.7): {GOAL}", 1
    if 6 <= turn <= 12:
        return f"Goal {handle} (priority 0.7, 50% done): {GOAL}", 2
    return None, None


async def test_twenty_turns_steered_through_the_mcp_tools(stores: Stores) -> None:
    clock = ticking_clock(T0)
    orchestrator = Orchestrator(stores, OrchestratorConfig(deadline_ms=60_000), clock=clock)
    await apply(orchestrator.agents, load(EXAMPLE))
    service = Service(orchestrator, clock=clock)
    goal_id = handle = ""
    states: list[FrontalItem | None] = []
    async with Client(build_mcp(service, TENANT), read_timeout_seconds=60) as client:
        for turn in range(1, 21):
            started = await call(
                client,
                "start_turn",
                {"message": f"Turn {turn}: how is it going?", "session_id": "s"},
            )
            if turn == 2:
                goal = await call(client, "set_goal", {"title": GOAL, "priority": 0.7})
                goal_id, handle = goal["item_id"], goal["handle"]
                assert goal["version"] == 1
            if turn == 5:
                moved = await call(client, "update_goal", {"goal_id": handle, "progress": 0.5})
                assert (moved["version"], moved["progress"]) == (2, 0.5)
            if turn == 12:
                done = await call(client, "complete_goal", {"goal_id": handle})
                assert (done["status"], done["version"]) == ("done", 3)
            await call(client, "end_turn", {"turn_id": started["turn_id"], "reply": "On it."})
            await orchestrator.wait_written(started["turn_id"])
            trace = await stores.traces.get(TENANT, started["turn_id"])
            assert trace is not None
            shown = trace.phase("frontal_cortex").detail["shown"]
            line, version = expected(turn, handle)
            context = started["context"]
            if line is None:
                assert GOAL not in context, turn
                assert not [s for s in shown if goal_id and goal_id in s], turn
            else:
                assert line in context, (turn, context)
                assert f"goal:{goal_id}@v{version}" in shown, (turn, shown)
            states.append(await orchestrator.agents.find_item(TENANT, goal_id or "none"))
    final = states[-1]
    assert final is not None
    assert (final.status.value, final.progress, final.version) == ("done", 1.0, 3)
    assert [s.version if s else None for s in states[:2]] == [None, 1]
