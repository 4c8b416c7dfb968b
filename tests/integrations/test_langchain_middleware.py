"""LangChain's create_agent with PrefrontalMiddleware: ten turns, tool calls, the state left as is."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from prefrontal.integrations.langchain_agent import PrefrontalMiddleware
from prefrontal.integrations.langgraph import memory_tools
from prefrontal.integrations.memory_tools import MemoryTools
from prefrontal.integrations.turns import split
from tests.integrations import conversation as conv
from tests.integrations import tool_turns
from tests.integrations.test_langgraph_memory_tools import scripted, tool_results
from tests.integrations.test_langgraph_turns import (
    CONFIG,
    RecordingModel,
    as_messages,
    check_calendar,
    scripted_replies,
)

pytestmark = pytest.mark.anyio

OWN_PROMPT = "You are Atlas, a travel assistant."


@pytest.mark.parametrize("backend", conv.BACKENDS)
async def test_create_agent_sees_what_the_orchestrator_gives(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Each turn's first model call gets the direct run's messages; the agent's state keeps its own."""
    dsn = conv.dsn_for(backend, request)
    async with conv.orchestrator_on(backend, tmp_path / "direct", dsn) as orchestrator:
        direct = await conv.direct_run(orchestrator)
    model = RecordingModel(messages=scripted_replies())
    async with conv.orchestrator_on(backend, tmp_path / "agent", dsn) as orchestrator:
        memory = PrefrontalMiddleware(orchestrator, agent_id=conv.AGENT)
        agent = create_agent(model, [check_calendar], middleware=[memory])
        states = [
            await agent.ainvoke({"messages": [HumanMessage(text)]}, CONFIG) for text in conv.INPUTS
        ]
        asked = memory.turn.turns.last[(conv.USER, conv.SESSION)]
    calls = [as_messages(seen) for seen in model.seen]
    firsts = [call for index, call in enumerate(calls) if index != conv.TOOL_TURN]
    assert [conv.pairs(s) for s in firsts] == [conv.pairs(s) for s in direct.inputs]
    assert conv.fact_provenance(asked) == conv.fact_provenance(direct.results[conv.ASK_TURN - 1])
    at_ask = firsts[conv.ASK_TURN - 1]
    assert not any(conv.FACT_WORDS in m["content"] for m in at_ask if m["role"] == "system")
    # The state is the run's transcript: the user's words as given, no prefrontal framing.
    tool_turn = states[conv.TOOL_TURN - 1]["messages"]
    assert [m.type for m in tool_turn] == ["human", "ai", "tool", "ai"]
    assert tool_turn[0].content == conv.INPUTS[conv.TOOL_TURN - 1]
    assert all(len(state["messages"]) >= 2 for state in states)
    assert not any(isinstance(m, SystemMessage) for state in states for m in state["messages"])
    # The exchange is recorded: turn 10's reply is in the conversation the next turn sees.
    assert memory.turn.turns.pending(conv.USER, conv.SESSION) is None
    assert memory.turn.turns.ended[(conv.USER, conv.SESSION)].turn_id == asked.context.turn_id


async def test_the_agents_own_prompt_follows_prefrontals_system_part(tmp_path: Path) -> None:
    """create_agent's system_prompt stays in the system message, after prefrontal's system part."""
    model = RecordingModel(messages=iter([AIMessage(content="Hello."), AIMessage(content="Yes.")]))
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        await orchestrator.agents.set_profile(
            conv.tenant(), name="Atlas", mandates=("Check dates before booking.",)
        )
        memory = PrefrontalMiddleware(orchestrator, agent_id=conv.AGENT)
        agent = create_agent(model, [], system_prompt=OWN_PROMPT, middleware=[memory])
        for text in conv.INPUTS[:2]:
            await agent.ainvoke({"messages": [HumanMessage(text)]}, CONFIG)
        second = memory.turn.turns.last[(conv.USER, conv.SESSION)]
    placed = split(second.bundle.to_messages(user_input=conv.INPUTS[1]))
    assert "Check dates before booking." in placed.instructions  # the owner's profile
    seen = model.seen[1]
    assert seen[0] == SystemMessage(content=f"{placed.instructions}\n\n{OWN_PROMPT}")
    assert [m for m in seen[1:] if isinstance(m, SystemMessage)] == []


@pytest.mark.parametrize("backend", conv.BACKENDS)
async def test_ten_turns_with_memory_tool_calls(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """With the memory tools, turn 2 remembers the fact and turn 9's recall returns it, fenced."""
    dsn = conv.dsn_for(backend, request)
    model = RecordingModel(messages=scripted())
    async with conv.orchestrator_on(backend, tmp_path, dsn) as orchestrator:
        memory = PrefrontalMiddleware(orchestrator, agent_id=conv.AGENT)
        tools = memory_tools(MemoryTools(orchestrator, agent_id=conv.AGENT))
        agent = create_agent(model, tools, middleware=[memory])
        for text in conv.INPUTS:
            await agent.ainvoke({"messages": [HumanMessage(text)]}, CONFIG)
        await tool_turns.check_memory(orchestrator)
    (recall,) = tool_results(model, "recall")
    assert tool_turns.recalled(str(recall.content))
