"""Sync LangGraph turn nodes and the sync create_agent middleware: graph.invoke, parallel calls."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.prebuilt import create_react_agent

from prefrontal import Orchestrator, Stores
from prefrontal.integrations.blocking import SyncFromRunningLoop
from prefrontal.integrations.langgraph import PrefrontalTurn, memory_tools
from prefrontal.integrations.memory_tools import MemoryTools
from prefrontal.stores import sqlite
from tests.conftest import counting_ids, fixed_clock
from tests.integrations import conversation as conv
from tests.integrations import tool_turns
from tests.integrations.test_langgraph_memory_tools import scripted, tool_results
from tests.integrations.test_langgraph_turns import CONFIG, RecordingModel


def stores_on(backend: str, tmp_path: Path) -> Stores:
    """Fresh stores, opened by the first call on prefrontal's loop thread."""
    if backend == "memory":
        return Stores.in_memory()
    return sqlite.open_stores(tmp_path / "sync.db")


# create_react_agent is deprecated in LangGraph 1.x (removed in 2.0) but still its prebuilt.
@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
@pytest.mark.parametrize("seat", ["prompt", "pre_model_hook"])
@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_a_sync_graph_runs_ten_turns_with_memory_tools(
    backend: str, seat: str, tmp_path: Path
) -> None:
    """graph.invoke with the sync nodes and tools: turn 9's recall returns turn 2's fact."""
    orchestrator = Orchestrator(stores_on(backend, tmp_path), clock=fixed_clock, ids=counting_ids())
    turn = PrefrontalTurn(orchestrator, agent_id=conv.AGENT)
    tools = memory_tools(MemoryTools(orchestrator, agent_id=conv.AGENT), loop=turn.loop)
    model = RecordingModel(messages=scripted())
    placing: dict[str, Any] = (
        {"prompt": turn.prompt} if seat == "prompt" else {"pre_model_hook": turn.before_model_sync}
    )
    agent = create_react_agent(model, tools, post_model_hook=turn.after_model_sync, **placing)
    with turn.blocking():
        for text in conv.INPUTS:
            agent.invoke({"messages": [HumanMessage(text)]}, CONFIG)
        turn.loop.call(lambda: tool_turns.check_memory(orchestrator))
        assert turn.turns.pending(conv.USER, conv.SESSION) is None
    (recall,) = tool_results(model, "recall")
    assert tool_turns.recalled(str(recall.content))
    assert len(turn.turns.ended) == 1


def test_parallel_sync_nodes_share_one_loop(tmp_path: Path) -> None:
    """Sixteen sync node calls from eight threads at once, on a fresh SQLite file, all succeed."""
    orchestrator = Orchestrator(
        stores_on("sqlite", tmp_path), clock=fixed_clock, ids=counting_ids()
    )
    turn = PrefrontalTurn(orchestrator, agent_id=conv.AGENT, user_id=conv.USER)

    def node(index: int) -> int:
        config: RunnableConfig = {"configurable": {"thread_id": f"t-{index}"}}
        state = {"messages": [HumanMessage(f"Question number {index}?")]}
        update = turn.before_model_sync(state, config)
        return len(update.get("llm_input_messages", []))

    with turn.blocking(), ThreadPoolExecutor(max_workers=8) as pool:
        sizes = list(pool.map(node, range(16)))
    assert all(size >= 1 for size in sizes)
    assert len(turn.turns.last) == 16


@pytest.mark.anyio
async def test_a_sync_node_refuses_a_running_loop(tmp_path: Path) -> None:
    """Called where an event loop runs, a sync node raises instead of blocking that loop."""
    turn = PrefrontalTurn(
        Orchestrator(Stores.in_memory(), clock=fixed_clock), agent_id=conv.AGENT, user_id=conv.USER
    )
    state = {"messages": [HumanMessage("Hello?")]}
    with pytest.raises(SyncFromRunningLoop, match="await before_model"):
        turn.before_model_sync(state, CONFIG)
    assert turn.turns.last == {}


def test_create_agent_runs_synchronously_with_the_middleware(tmp_path: Path) -> None:
    """agent.invoke with PrefrontalMiddleware inside blocking(): ten turns, the tools' fact recalled."""
    pytest.importorskip("langchain")
    from langchain.agents import create_agent

    from prefrontal.integrations.langchain_agent import PrefrontalMiddleware

    orchestrator = Orchestrator(
        stores_on("sqlite", tmp_path), clock=fixed_clock, ids=counting_ids()
    )
    memory = PrefrontalMiddleware(orchestrator, agent_id=conv.AGENT)
    tools = memory_tools(MemoryTools(orchestrator, agent_id=conv.AGENT), loop=memory.turn.loop)
    model = RecordingModel(messages=scripted())
    agent = create_agent(model, tools, middleware=[memory])
    with memory.blocking():
        for text in conv.INPUTS:
            agent.invoke({"messages": [HumanMessage(text)]}, CONFIG)
        memory.turn.loop.call(lambda: tool_turns.check_memory(orchestrator))
    (recall,) = tool_results(model, "recall")
    assert tool_turns.recalled(str(recall.content))
    assert memory.turn.turns.pending(conv.USER, conv.SESSION) is None
