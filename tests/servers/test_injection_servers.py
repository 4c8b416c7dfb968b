"""The injection suite over both servers: every hostile string through the HTTP API and MCP tools.

Over HTTP each string is remembered (a private episodic memory of maya's,
or a shared semantic memory written by the curator key), and is part of a
turn's input, reply, tool call and outcome; over MCP each is remembered
and part of a turn's reply. Every context the servers hand back keeps
prefrontal's structure and budget, and carries each string's marker as data.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from prefrontal.bundle.fence import LINE_BREAKS
from prefrontal.bundle.fragments import SECTION_ORDER
from prefrontal.demo import DEMO_USER
from tests.security.hostile import HOSTILE
from tests.servers.conftest import seeded
from tests.servers.harness import (
    AGENT_KEY,
    CURATOR_KEY,
    READ_ONLY_KEY,
    http_server,
    mcp_http_server,
)
from tests.servers.test_mcp import http_client

BATCH = 16
BUDGET = 100_000
HEADINGS = [f"## {s.heading}" for s in SECTION_ORDER]


def batches() -> Iterator[tuple[int, Sequence[str]]]:
    for start in range(0, len(HOSTILE), BATCH):
        yield start, HOSTILE[start : start + BATCH]


def marker(n: int, path: str) -> str:
    return f"qz{n:04d}{path}"


def check_text(text: str, total_tokens: int, budget: int) -> None:
    """Only prefrontal's headings, once each and in order; no stray line breaks; within budget."""
    lines = text.split("\n")
    headings = [line for line in lines if line.startswith("#")]
    assert headings == [h for h in HEADINGS if h in headings]
    assert lines[0] == "## Identity and rules"
    assert not [c for c in LINE_BREAKS if c != "\n" and c in text]
    assert total_tokens <= budget


def check_turn(turn: dict[str, Any]) -> None:
    """An HTTP turn: its text as above, and every data fragment on one line."""
    check_text(turn["text"], turn["total_tokens"], turn["budget"])
    for fragment in turn["fragments"]:
        if fragment["section"] != "consciousness":
            assert "\n" not in fragment["text"]


def as_data(turn: dict[str, Any], wanted: str) -> bool:
    """``wanted`` is in a fragment outside the owner's section."""
    return any(wanted in f["text"] for f in turn["fragments"] if f["section"] != "consciousness")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("inject") / "server.db"
    anyio.run(seeded, path)
    return path


def test_every_hostile_string_through_the_http_api(db: Path) -> None:
    """Private and shared memories, inputs, replies, tool calls and outcomes over HTTP."""
    agent, curator = ({"Authorization": f"Bearer {k}"} for k in (AGENT_KEY, CURATOR_KEY))
    with http_server(db) as (base, _), httpx.Client(base_url=base, timeout=60) as client:
        parent: str | None = None
        for start, batch in batches():
            for k, text in enumerate(batch):
                n = start + k
                shared = n % 2 == 1
                body = {
                    "user_id": "sam" if shared else DEMO_USER,
                    "content": f"{text} {marker(n, 'm')}",
                    "scope": "shared" if shared else "private",
                    "store": "semantic" if shared else "episodic",
                }
                written = client.post(
                    "/v1/memories", json=body, headers=curator if shared else agent
                )
                assert written.status_code == 201, written.text
            markers = [marker(start + k, "m") for k in range(len(batch))]
            turn = start_turn(client, agent, " ".join(markers), parent)
            check_turn(turn)
            assert not [m for m in markers if not as_data(turn, m)]
            joined = " ".join(batch)
            end_turn(client, agent, turn["turn_id"], f"{marker(start, 'r')} {joined}", joined)
            hostile = start_turn(client, agent, joined, turn["turn_id"])
            check_turn(hostile)
            assert as_data(hostile, marker(start, "r"))
            end_turn(client, agent, hostile["turn_id"], "Noted.", "answered")
            parent = hostile["turn_id"]


def start_turn(
    client: httpx.Client, headers: dict[str, str], text: str, parent: str | None
) -> dict[str, Any]:
    body = {
        "user_id": DEMO_USER,
        "session_id": "inject",
        "user_input": text,
        "parent_turn_id": parent,
        "token_budget": BUDGET,
    }
    response = client.post("/v1/turns", json=body, headers=headers)
    assert response.status_code == 200, response.text
    turn: dict[str, Any] = response.json()
    return turn


def end_turn(
    client: httpx.Client, headers: dict[str, str], turn_id: str, reply: str, hostile: str
) -> None:
    body = {
        "user_id": DEMO_USER,
        "reply": reply,
        "outcome": hostile[:2_000],
        "tool_calls": [
            {"name": hostile[:256], "result": hostile, "arguments": {"q": hostile[:200]}}
        ],
    }
    response = client.post(f"/v1/turns/{turn_id}/end", json=body, headers=headers)
    assert response.status_code == 200, response.text


@pytest.mark.anyio
async def test_every_hostile_string_through_the_mcp_tools(db: Path) -> None:
    """Memories and replies through the MCP tools over HTTP: each context keeps the structure."""
    with mcp_http_server(db) as url:
        async with http_client(url, AGENT_KEY) as client:
            for start, batch in batches():
                joined = " ".join(batch)
                remembered = await client.call_tool(
                    "remember", {"content": f"{joined} {marker(start, 'c')}"}
                )
                assert not remembered.is_error, remembered.content
                started = await call(
                    client, "start_turn", {"message": marker(start, "c"), "token_budget": BUDGET}
                )
                check_text(started["context"], started["total_tokens"], started["budget"])
                assert marker(start, "c") in started["context"]
                await call(client, "end_turn", {"turn_id": started["turn_id"], "reply": joined})


@pytest.mark.anyio
async def test_the_mcp_tools_follow_the_keys_rights(db: Path) -> None:
    """A read-only key starts turns and recalls over MCP, but may not remember or end a turn."""
    with mcp_http_server(db) as url:
        async with http_client(url, READ_ONLY_KEY) as client:
            started = await call(client, "start_turn", {"message": "How is the launch?"})
            refused = await client.call_tool("remember", {"content": "Maya likes tea."})
            assert refused.is_error
            assert "'write' right" in str(refused.content)
            ended = await client.call_tool(
                "end_turn", {"turn_id": started["turn_id"], "reply": "Fine."}
            )
            assert ended.is_error


async def call(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return dict(result.structured_content)
