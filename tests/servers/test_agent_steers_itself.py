"""The agent steers its own state over MCP: handles in its context, the file's goals in reach.

Each test is a reproduction of a failure seen on an earlier version: the
context named no goal, the agent file's goals could not be changed by the
agent's own tools, completing twice moved the version twice, a blank title
was stored, and the tool list cost a model 9,645 tokens. On every backend
(in memory, SQLite, PostgreSQL), through the MCP SDK's client in-process.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from prefrontal import Orchestrator, OrchestratorConfig, Stores
from prefrontal.agents.file import apply, load
from prefrontal.budgets.tokens import default_counter
from prefrontal.serving.mcp_tools import build_mcp
from prefrontal.serving.service import Service
from prefrontal.stores.tenancy import Tenant
from tests.conftest import ticking_clock

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent.toml"
TENANT = Tenant(agent_id="atlas", user_id="maya")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TOOL_LIST_LIMIT = 3_000


async def served(stores: Stores) -> tuple[Orchestrator, Service]:
    """An orchestrator and service over ``stores`` with the example agent file applied."""
    clock = ticking_clock(T0)
    orchestrator = Orchestrator(stores, OrchestratorConfig(deadline_ms=60_000), clock=clock)
    await apply(orchestrator.agents, load(EXAMPLE))
    return orchestrator, Service(orchestrator, clock=clock)


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``tool``'s result as a dictionary (the call must succeed)."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    answer: dict[str, Any] = json.loads(text)
    return answer


async def failed(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    """The error text of a call that must fail."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.content
    return str(result.content[0].text)  # type: ignore[union-attr]


def handle_in(context: str, title: str) -> str:
    """The handle the context shows on the line of ``title``."""
    found = re.search(rf"^\w[\w ]*? (#\d{{6}}) \([^\n]*\): {re.escape(title)}", context, re.M)
    assert found is not None, context
    return found.group(1)


async def test_the_model_advances_a_file_goal_by_the_handle_in_its_context(
    stores: Stores,
) -> None:
    """A goal from the agent file shows with a handle; update_goal with it changes that goal."""
    _, service = await served(stores)
    async with Client(build_mcp(service, TENANT), read_timeout_seconds=60) as client:
        first = await call(client, "start_turn", {"message": "How is the launch?"})
        handle = handle_in(first["context"], "Ship the December 3 launch")
        moved = await call(client, "update_goal", {"goal_id": handle, "progress": 0.4})
        assert (moved["handle"], moved["belongs_to"], moved["version"]) == (handle, "agent", 2)
        blocked = await call(client, "update_goal", {"goal_id": handle, "status": "blocked"})
        second = await call(client, "start_turn", {"message": "And now?"})
    assert blocked["status"] == "blocked"
    assert f"Goal {handle} (priority 0.8, 40% done, blocked): Ship" in second["context"]
    assert "agent-file" not in json.dumps([first, moved, blocked, second])


async def test_completing_twice_changes_nothing_the_second_time(stores: Stores) -> None:
    """complete_goal on a goal already done returns it at the same version."""
    _, service = await served(stores)
    async with Client(build_mcp(service, TENANT), read_timeout_seconds=60) as client:
        goal = await call(client, "set_goal", {"title": "Book the venue"})
        once = await call(client, "complete_goal", {"goal_id": goal["item_id"]})
        twice = await call(client, "complete_goal", {"goal_id": goal["item_id"]})
    assert (once["status"], once["version"]) == ("done", 2)
    assert twice["version"] == 2


async def test_a_blank_title_is_refused(stores: Stores) -> None:
    """set_goal with a title of spaces is a tool error naming the title."""
    _, service = await served(stores)
    async with Client(build_mcp(service, TENANT), read_timeout_seconds=60) as client:
        error = await failed(client, "set_goal", {"title": "   "})
    assert "title" in error


async def test_an_unknown_handle_says_where_handles_are(stores: Stores) -> None:
    """A handle no visible goal has is a tool error pointing at the context's handles."""
    _, service = await served(stores)
    async with Client(build_mcp(service, TENANT), read_timeout_seconds=60) as client:
        error = await failed(client, "complete_goal", {"goal_id": "#000000"})
    assert "handle" in error and "context" in error


async def test_the_tool_list_costs_at_most_3000_tokens() -> None:
    """The tools as listed to a model, as compact JSON, count at most 3,000 cl100k tokens."""
    orchestrator = Orchestrator(Stores.in_memory(), clock=ticking_clock(T0))
    service = Service(orchestrator, clock=ticking_clock(T0))
    async with Client(build_mcp(service, TENANT)) as client:
        listed = await client.list_tools()
    tools = [t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in listed.tools]
    tokens = default_counter().count(json.dumps(tools))
    assert len(tools) == 13
    assert tokens <= TOOL_LIST_LIMIT, tokens
    for tool in tools:
        assert tool["description"] and "        " not in tool["description"]
        schema = tool["inputSchema"]
        assert schema["additionalProperties"] is False
        assert all(p.get("description") for p in schema["properties"].values()), tool["name"]
    goal_tools = {t["name"]: t for t in tools}
    described = goal_tools["update_goal"]["inputSchema"]["properties"]["goal_id"]["description"]
    assert "handle" in described and "context" in described
