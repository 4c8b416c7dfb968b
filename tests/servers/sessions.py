"""The scripted session's six operations over each transport: in-process, HTTP, MCP."""

from __future__ import annotations

import json
from typing import Any

import httpx
from mcp import Client

from prefrontal import Orchestrator, OrchestratorConfig, TurnRequest
from prefrontal.budgets.tokens import default_counter
from prefrontal.demo import DEMO_AGENT, DEMO_USER
from prefrontal.serving.determinism import CountingIds, SteppedClock
from prefrontal.serving.models import MemoryOut, TraceOut
from prefrontal.serving.recall import session_recall
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant
from tests.servers.harness import DEADLINE_MS, START

TOP_K = 5
TENANT = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)


class LocalSession:
    """The library called directly, on the same clock and ids as a test server."""

    def __init__(self, stores: Stores) -> None:
        self.clock = SteppedClock(START)
        config = OrchestratorConfig(deadline_ms=DEADLINE_MS)
        self.orchestrator = Orchestrator(stores, config, clock=self.clock, ids=CountingIds())
        self.counter = default_counter()

    async def start(self, message: str, session_id: str) -> dict[str, Any]:
        self.clock.advance()
        result = await self.orchestrator.start_turn(
            TurnRequest(
                agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=session_id, user_input=message
            )
        )
        return {
            "turn_id": result.context.turn_id,
            "text": result.bundle.text,
            "total_tokens": result.bundle.total_tokens,
            "budget": result.bundle.budget,
            "status": result.trace.status.value,
        }

    async def end(self, turn_id: str, reply: str) -> dict[str, Any]:
        self.clock.advance()
        ended = await self.orchestrator.end_turn(
            turn_id, reply, agent_id=DEMO_AGENT, user_id=DEMO_USER
        )
        return {"turn_id": ended.turn_id, "written": ended.written}

    async def recall(self, query: str, session_id: str) -> dict[str, Any]:
        self.clock.advance()
        found = await session_recall(
            self.orchestrator,
            TENANT,
            session_id,
            query,
            top_k=TOP_K,
            clock=self.clock,
            counter=self.counter,
        )
        return found.model_dump(mode="json")

    async def remember(self, content: str) -> dict[str, Any]:
        self.clock.advance()
        item = await self.orchestrator.memory.remember(TENANT, content)
        return MemoryOut.of(item).model_dump(mode="json")

    async def forget(self, item_id: str) -> dict[str, Any]:
        self.clock.advance()
        removed = await self.orchestrator.memory.forget(TENANT, item_id)
        return {"item_id": item_id, "forgotten": removed}

    async def trace(self, turn_id: str) -> dict[str, Any]:
        self.clock.advance()
        trace = await self.orchestrator.stores.traces.get(TENANT, turn_id)
        assert trace is not None
        return TraceOut.of(trace).model_dump(mode="json")


class HttpSession:
    """The HTTP API through httpx."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def _ok(self, response: httpx.Response) -> dict[str, Any]:
        assert response.status_code in (200, 201), response.text
        body: dict[str, Any] = response.json()
        return body

    async def start(self, message: str, session_id: str) -> dict[str, Any]:
        body = {"user_id": DEMO_USER, "session_id": session_id, "user_input": message}
        return await self._ok(await self.client.post("/v1/turns", json=body))

    async def end(self, turn_id: str, reply: str) -> dict[str, Any]:
        body = {"user_id": DEMO_USER, "reply": reply}
        return await self._ok(await self.client.post(f"/v1/turns/{turn_id}/end", json=body))

    async def recall(self, query: str, session_id: str) -> dict[str, Any]:
        body = {"user_id": DEMO_USER, "query": query, "session_id": session_id, "top_k": TOP_K}
        return await self._ok(await self.client.post("/v1/memories/search", json=body))

    async def remember(self, content: str) -> dict[str, Any]:
        body = {"user_id": DEMO_USER, "content": content}
        return await self._ok(await self.client.post("/v1/memories", json=body))

    async def forget(self, item_id: str) -> dict[str, Any]:
        params = {"user_id": DEMO_USER}
        return await self._ok(await self.client.delete(f"/v1/memories/{item_id}", params=params))

    async def trace(self, turn_id: str) -> dict[str, Any]:
        params = {"user_id": DEMO_USER}
        return await self._ok(await self.client.get(f"/v1/turns/{turn_id}/trace", params=params))


class McpSession:
    """The MCP tools through the SDK's own client."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def _call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        structured = result.structured_content
        if structured is None:  # pragma: no cover - every tool returns a model
            structured = json.loads(result.content[0].text)  # type: ignore[union-attr]
        return dict(structured)

    async def start(self, message: str, session_id: str) -> dict[str, Any]:
        turn = await self._call("start_turn", {"message": message, "session_id": session_id})
        return turn | {"text": turn["context"]}

    async def end(self, turn_id: str, reply: str) -> dict[str, Any]:
        return await self._call("end_turn", {"turn_id": turn_id, "reply": reply})

    async def recall(self, query: str, session_id: str) -> dict[str, Any]:
        arguments = {"query": query, "session_id": session_id, "top_k": TOP_K}
        return await self._call("recall", arguments)

    async def remember(self, content: str) -> dict[str, Any]:
        return await self._call("remember", {"content": content})

    async def forget(self, item_id: str) -> dict[str, Any]:
        return await self._call("forget", {"memory_id": item_id})

    async def trace(self, turn_id: str) -> dict[str, Any]:
        return await self._call("trace", {"turn_id": turn_id})
