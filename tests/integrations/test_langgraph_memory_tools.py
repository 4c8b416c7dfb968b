"""LangGraph: prefrontal's memory tools called by the model over ten turns, on every backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.prebuilt import create_react_agent

from prefrontal.integrations.langgraph import PrefrontalTurn, memory_tools
from prefrontal.integrations.memory_tools import MemoryTools
from prefrontal.serving.keys import KeyGrant, Right
from tests.integrations import conversation as conv
from tests.integrations import tool_turns
from tests.integrations.test_langgraph_turns import CONFIG, RecordingModel

pytestmark = [
    pytest.mark.anyio,
    # create_react_agent is deprecated in LangGraph 1.x (removed in 2.0) but still its prebuilt.
    pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10"),
]


def scripted() -> Iterator[AIMessage]:
    """The model's messages: remember at turn 2, recall at turn 9, a reply every turn."""
    for turn in range(1, len(conv.INPUTS) + 1):
        called = tool_turns.tool_call_at(turn)
        if called is not None:
            name, args = called
            yield AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{turn}"}])
        yield AIMessage(content=conv.reply_for(turn))


def tool_results(model: RecordingModel, name: str) -> list[ToolMessage]:
    """The tool messages of ``name``'s calls the model was given (each once)."""
    found: dict[str, ToolMessage] = {}
    for seen in model.seen:
        for message in seen:
            if isinstance(message, ToolMessage) and message.name == name:
                found[message.tool_call_id] = message
    return list(found.values())


@pytest.mark.parametrize("backend", conv.BACKENDS)
async def test_ten_turns_with_memory_tool_calls(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Turn 2's remember call stores the fact; turn 9's recall gives it back to the model, fenced."""
    dsn = conv.dsn_for(backend, request)
    model = RecordingModel(messages=scripted())
    async with conv.orchestrator_on(backend, tmp_path, dsn) as orchestrator:
        turn = PrefrontalTurn(orchestrator, agent_id=conv.AGENT)
        tools = memory_tools(MemoryTools(orchestrator, agent_id=conv.AGENT))
        agent = create_react_agent(
            model, tools, pre_model_hook=turn.before_model, post_model_hook=turn.after_model
        )
        for text in conv.INPUTS:
            await agent.ainvoke({"messages": [HumanMessage(text)]}, CONFIG)
        await tool_turns.check_memory(orchestrator)
        recorded = turn.turns.ended[(conv.USER, conv.SESSION)]
    (recall,) = tool_results(model, "recall")
    assert tool_turns.recalled(str(recall.content))
    (remember,) = tool_results(model, "remember")
    assert str(remember.content).startswith("Remembered (fact, id ")
    assert recorded.written  # turn 10 ended: every run of the graph was recorded


async def test_a_read_only_key_is_refused_in_the_tool_message(tmp_path: Path) -> None:
    """With a read-only key, remember comes back to the model as an error message; nothing is kept."""
    grant = KeyGrant(
        name="reader",
        sha256="0" * 64,
        agent_id=conv.AGENT,
        users=(conv.USER,),
        rights=(Right.READ,),
    )
    model = RecordingModel(messages=scripted())
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        turn = PrefrontalTurn(orchestrator, agent_id=conv.AGENT)
        tools = memory_tools(MemoryTools(orchestrator, agent_id=conv.AGENT, grant=grant))
        agent = create_react_agent(
            model, tools, pre_model_hook=turn.before_model, post_model_hook=turn.after_model
        )
        for text in conv.INPUTS[:2]:
            await agent.ainvoke({"messages": [HumanMessage(text)]}, CONFIG)
        hits = await orchestrator.memory.recall(conv.tenant(), tool_turns.QUERY, top_k=20)
        assert [h for h in hits if h.item.content == tool_turns.REMEMBERED] == []
    (refused,) = tool_results(model, "remember")
    assert refused.status == "error"
    assert "lacks the 'write' right" in str(refused.content)


async def test_a_tool_call_for_another_user_is_refused(tmp_path: Path) -> None:
    """Tools made for one user refuse a run configured for another (nothing read or written)."""
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        remember = memory_tools(MemoryTools(orchestrator, agent_id=conv.AGENT), user_id=conv.USER)[
            0
        ]
        other: RunnableConfig = {"configurable": {"user_id": "mallory", "thread_id": "t"}}
        with pytest.raises(ValueError, match="serves user 'maya'"):
            await remember.ainvoke({"content": "planted"}, other)
        assert await orchestrator.memory.recall(conv.tenant(), "planted") == []
