"""``prefrontal serve mcp`` in a subprocess, driven with the MCP SDK's own client (stdio and HTTP)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from prefrontal.demo import SAMPLE_INPUT
from prefrontal.stores import sqlite
from tests.servers.conftest import seeded
from tests.servers.harness import (
    AGENT_KEY,
    DEADLINE,
    OTHER_AGENT_KEY,
    mcp_http_server,
    run_session,
    server_env,
)
from tests.servers.sessions import LocalSession, McpSession

pytestmark = pytest.mark.anyio
TOOLS = {"start_turn", "end_turn", "recall", "remember", "forget", "trace"} | {
    "set_goal",
    "update_goal",
    "complete_goal",
    "note_observation",
    "note_risk",
    "ask_confirmation",
    "resolve_confirmation",
}


@asynccontextmanager
async def stdio_client(db: Path) -> AsyncIterator[Client]:
    """The SDK's client on ``prefrontal serve mcp`` over stdio (the test clock set)."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "prefrontal", "serve", "mcp", "--db", str(db), *DEADLINE],
        env=server_env(),
    )
    async with Client(parameters, read_timeout_seconds=60) as client:
        yield client


@asynccontextmanager
async def http_client(url: str, key: str) -> AsyncIterator[Client]:
    """The SDK's client on an MCP server over streamable HTTP, sending ``key``."""
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as transport_client:
        transport = streamable_http_client(url, http_client=transport_client)
        async with Client(transport, read_timeout_seconds=60) as client:
            yield client


async def local_session(path: Path) -> list[dict[str, object]]:
    """The scripted session, in-process on a freshly seeded SQLite file."""
    stores = sqlite.open_stores(await seeded(path))
    try:
        return await run_session(LocalSession(stores))
    finally:
        await stores.aclose()


async def test_the_tools_are_listed_with_descriptions_and_argument_schemas(demo_db: Path) -> None:
    """Every tool has a description a model can act on and a schema saying what is required."""
    async with stdio_client(demo_db) as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 60
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
    assert tools["start_turn"].input_schema["required"] == ["message"]
    assert tools["end_turn"].input_schema["required"] == ["turn_id", "reply"]
    assert tools["recall"].input_schema["properties"]["top_k"]["maximum"] == 50
    assert tools["forget"].annotations is not None and tools["forget"].annotations.destructive_hint


async def test_a_turn_and_its_trace_over_stdio(demo_db: Path) -> None:
    """start_turn returns the context, its turn id and token counts; trace lists eleven phases."""
    async with stdio_client(demo_db) as client:
        started = await client.call_tool("start_turn", {"message": SAMPLE_INPUT})
        turn = started.structured_content
        assert turn is not None and not started.is_error
        traced = await client.call_tool("trace", {"turn_id": turn["turn_id"]})
        missing = await client.call_tool("trace", {"turn_id": "no-such-turn"})
    assert "You are Atlas" in turn["context"]
    assert 0 < turn["total_tokens"] <= turn["budget"] == 4_000
    assert traced.structured_content is not None
    assert len(traced.structured_content["phases"]) == 11
    assert missing.is_error
    assert "no turn 'no-such-turn'" in missing.content[0].text  # type: ignore[union-attr]


async def test_ten_turns_over_stdio_give_the_bundles_of_the_same_calls_in_process(
    demo_db: Path, tmp_path: Path
) -> None:
    """A ten-turn session through the MCP tools over stdio sees what the same calls see in-process."""
    async with stdio_client(demo_db) as client:
        remote = await run_session(McpSession(client))
    local = await local_session(tmp_path / "local.db")
    assert len(remote) == len(local) > 40
    for n, (seen, expected) in enumerate(zip(remote, local, strict=True)):
        assert seen == expected, f"call {n} differs"


async def test_ten_turns_over_streamable_http_give_the_bundles_of_the_same_calls_in_process(
    demo_db: Path, tmp_path: Path
) -> None:
    """The same session through the MCP tools over streamable HTTP sees the same as in-process."""
    with mcp_http_server(demo_db) as url:
        async with http_client(url, AGENT_KEY) as client:
            remote = await run_session(McpSession(client))
    local = await local_session(tmp_path / "local.db")
    assert len(remote) == len(local) > 40
    for n, (seen, expected) in enumerate(zip(remote, local, strict=True)):
        assert seen == expected, f"call {n} differs"


async def test_mcp_over_http_needs_a_key_for_its_agent_and_user(demo_db: Path) -> None:
    """Without a key, with a wrong one, or with another agent's, the MCP endpoint refuses."""
    with mcp_http_server(demo_db) as url:
        async with httpx.AsyncClient(timeout=30) as client:
            request = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            none = await client.post(url, json=request)
            wrong = await client.post(url, json=request, headers={"Authorization": "Bearer nope"})
            other = await client.post(
                url, json=request, headers={"Authorization": f"Bearer {OTHER_AGENT_KEY}"}
            )
    assert (none.status_code, wrong.status_code, other.status_code) == (401, 401, 403)
    assert none.json()["detail"] == "An API key is required."
    assert other.json()["detail"] == "This API key may not act for this server."


async def test_forget_over_stdio_removes_a_turns_message(demo_db: Path) -> None:
    """``forget`` of the reply's id: the next turn shows the user's words but not the reply."""
    async with stdio_client(demo_db) as client:
        session = McpSession(client)
        turn = await session.start("Please note the gate code W-GATE-8080.", "mcp-forget")
        ended = await session.end(turn["turn_id"], "Gate code Y-GATE-9191 noted.")
        user_id, reply_id = ended["message_ids"]
        forgotten = await session.forget(reply_id)
        again = await session.forget(reply_id)
        later = await session.start("What was the gate code?", "mcp-forget")
    assert (forgotten["forgotten"], again["forgotten"]) == (True, False)
    assert user_id.endswith(":user")
    assert "W-GATE-8080" in later["text"]
    assert "Y-GATE-9191" not in later["text"]
