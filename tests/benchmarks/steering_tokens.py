"""What steering costs a model in tokens: the MCP tool list, and the handles in the context.

``python -m tests.benchmarks.steering_tokens`` prints one JSON object:

- ``tool_list``: the MCP server's ``tools/list`` result as a model reads it
  (each tool dumped as JSON, compact): its tokens in all and per tool, and
  the tokens of the same list with the SDK's full schemas (what
  :func:`prefrontal.serving.mcp_schema.compact` leaves out);
- ``demo_turn``: the demo turn's context: its tokens, how many of its lines
  carry a handle, and the tokens those lines cost with and without their
  handle (the line counted again with `` #NNNNNN`` removed).

Token counts are cl100k (the default counter). Figures are measured, never
asserted.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
from mcp import Client

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.budgets.tokens import default_counter
from prefrontal.demo import DEMO_AGENT, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.serving.mcp_tools import build_mcp
from prefrontal.serving.service import Service
from prefrontal.stores.tenancy import Tenant
from tests.conftest import fixed_clock

HANDLE = re.compile(r" #\d{6}(?= )")


async def tool_list() -> dict[str, Any]:
    """The tool list's tokens, compacted and as the SDK would list it."""
    count = default_counter().count
    service = Service(Orchestrator(Stores.in_memory(), clock=fixed_clock), clock=fixed_clock)
    server = build_mcp(service, Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER))
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
    tools = [t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in listed]
    full = [
        t.model_dump(mode="json", exclude_none=True, by_alias=True)
        for t in await super(type(server), server).list_tools()
    ]
    return {
        "tools": len(tools),
        "tokens": count(json.dumps(tools)),
        "per_tool": {t["name"]: count(json.dumps(t)) for t in tools},
        "tokens_with_full_schemas": count(json.dumps(full)),
    }


async def demo_turn() -> dict[str, Any]:
    """The demo turn's context and what its handles cost."""
    count = default_counter().count
    stores = Stores.in_memory()
    await seed(stores)
    async with Orchestrator(stores, clock=fixed_clock) as orchestrator:
        turn = await orchestrator.start_turn(
            TurnRequest(
                agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id="bench", user_input=SAMPLE_INPUT
            )
        )
    lines = [line for line in turn.bundle.text.splitlines() if HANDLE.search(line)]
    with_handles = sum(count(line) for line in lines)
    without = sum(count(HANDLE.sub("", line)) for line in lines)
    return {
        "tokens": turn.bundle.total_tokens,
        "lines_with_a_handle": len(lines),
        "those_lines_tokens": with_handles,
        "those_lines_tokens_without_handles": without,
        "handles_cost": with_handles - without,
    }


async def main() -> None:
    """Measure and print."""
    print(json.dumps({"tool_list": await tool_list(), "demo_turn": await demo_turn()}, indent=2))


if __name__ == "__main__":
    anyio.run(main)
