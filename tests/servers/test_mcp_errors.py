"""MCP tool errors a model can act on: the argument and the reason, a retry after overload.

The server runs in process (the SDK's in-memory transport) over stores in
memory seeded with the demo agent; a stdio server in a subprocess is
driven by ``test_mcp``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from structlog.testing import capture_logs

from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.errors import OverloadedError
from prefrontal.serving.mcp_tools import build_mcp
from prefrontal.serving.service import Service
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)


@pytest.fixture
async def service() -> AsyncIterator[Service]:
    stores = Stores.in_memory()
    await seed(stores)
    built = Service.build(stores)
    async with built.orchestrator:
        yield built


async def _called(service: Service, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    async with Client(build_mcp(service, TENANT)) as client:
        result = await client.call_tool(tool, arguments)
    text = " ".join(getattr(part, "text", "") for part in result.content)
    return result.is_error, text


BAD_CALLS = [
    ("start_turn", {"message": "   "}, "message"),
    ("start_turn", {"message": "hi", "session_id": "a\x00b"}, "session_id"),
    ("start_turn", {"message": "hi", "token_budget": "2000"}, "token_budget"),
    ("start_turn", {"message": "hi", "parent_turn_id": ""}, "parent_turn_id"),
    ("start_turn", {"message": "hi", "budget": 2000}, "budget"),
    ("remember", {"content": "Maya cycles", "importance": False}, "importance"),
    ("remember", {"content": "\n"}, "content"),
    ("remember", {"content": "Maya cycles", "tags": ["t" * 300]}, "tags.0"),
    ("recall", {"query": "x", "top_k": "5"}, "top_k"),
    ("end_turn", {"turn_id": " ", "reply": "ok"}, "turn_id"),
    ("forget", {"memory_id": "m", "user_id": "sam"}, "user_id"),
]


@pytest.mark.parametrize(("tool", "arguments", "field"), BAD_CALLS)
async def test_a_bad_argument_is_named_without_help_links(
    service: Service, tool: str, arguments: dict[str, Any], field: str
) -> None:
    failed, text = await _called(service, tool, arguments)
    assert failed
    assert field in text
    assert "pydantic" not in text and "http" not in text
    assert "Traceback" not in text


async def test_overload_is_a_retryable_error_with_the_wait(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def overloaded(*args: object, **kwargs: object) -> None:
        raise OverloadedError("too many turns", retry_after_s=2.4)

    monkeypatch.setattr(service, "start_turn", overloaded)
    failed, text = await _called(service, "start_turn", {"message": "hi"})
    assert failed
    assert "retry the same call in 2 s" in text


async def test_an_unknown_turn_says_what_to_pass(service: Service) -> None:
    failed, text = await _called(service, "trace", {"turn_id": "no-such-turn"})
    assert failed and "start_turn" in text


async def test_an_unexpected_failure_is_logged_once_in_a_line(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire " + "x" * 5_000)

    monkeypatch.setattr(service, "recall", broken)
    with capture_logs() as logged:
        failed, text = await _called(service, "recall", {"query": "meetings"})
    assert failed and "failed" in text and "fire" not in text
    errors = [entry for entry in logged if entry["log_level"] == "error"]
    assert [entry["event"] for entry in errors] == ["unexpected_error"]
    assert len(str(errors[0])) < 1_000


async def test_the_tools_refuse_unknown_arguments_in_their_schemas(service: Service) -> None:
    async with Client(build_mcp(service, TENANT)) as client:
        tools = (await client.list_tools()).tools
    assert tools and all(tool.input_schema["additionalProperties"] is False for tool in tools)
