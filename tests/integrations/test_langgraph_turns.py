"""LangGraph: a turn started before the model and ended after it, in a prebuilt and a hand-built graph.

The model is langchain-core's ``GenericFakeChatModel`` (scripted replies, no
network) that also records what it was given. Ten turns through the graph
must give the model, at turn 9, the same input as the orchestrator called
directly gives (turn 2's fact in it, with the same provenance), on memory
and on SQLite.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import create_react_agent

from prefrontal.bundle.messages import Message
from prefrontal.integrations.langgraph import PrefrontalState, PrefrontalTurn
from tests.integrations import conversation as conv

pytestmark = pytest.mark.anyio


class RecordingModel(GenericFakeChatModel):
    """langchain-core's fake chat model, keeping every input it is given."""

    seen: list[list[BaseMessage]] = []  # noqa: RUF012 (a pydantic field: copied per instance)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RecordingModel:
        return self


def scripted_replies() -> Iterator[AIMessage]:
    """The model's messages over the ten turns: a tool call at turn 4, then its reply."""
    for turn in range(1, len(conv.INPUTS) + 1):
        if turn == conv.TOOL_TURN:
            call = {"name": conv.TOOL_NAME, "args": dict(conv.TOOL_ARGUMENTS), "id": "call-1"}
            yield AIMessage(content="", tool_calls=[call])
        yield AIMessage(content=conv.reply_for(turn))


@tool
def check_calendar(day: str) -> str:
    """Whether a day is free in the user's calendar."""
    return conv.TOOL_RESULT


def as_messages(messages: list[BaseMessage]) -> list[Message]:
    roles = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
    return [Message(role=roles[m.type], content=str(m.content)) for m in messages]


def first_inputs(model: RecordingModel) -> list[list[Message]]:
    """The model's input at the first call of each turn (a turn's tool round adds a call)."""
    calls = [as_messages(seen) for seen in model.seen]
    return [call for index, call in enumerate(calls) if index != conv.TOOL_TURN]


CONFIG: RunnableConfig = {"configurable": {"thread_id": conv.SESSION, "user_id": conv.USER}}


# create_react_agent is deprecated in LangGraph 1.x (removed in 2.0) but still its prebuilt agent.
@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
@pytest.mark.parametrize("seat", ["prompt", "pre_model_hook"])
@pytest.mark.parametrize("backend", conv.BACKENDS)
async def test_react_agent_sees_what_the_orchestrator_gives(
    backend: str, seat: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Through ``prompt`` (in the model's node) or a ``pre_model_hook`` node: the same input."""
    dsn = conv.dsn_for(backend, request)
    async with conv.orchestrator_on(backend, tmp_path / "direct", dsn) as orchestrator:
        direct = await conv.direct_run(orchestrator)
    model = RecordingModel(messages=scripted_replies())
    async with conv.orchestrator_on(backend, tmp_path / "graph", dsn) as orchestrator:
        turn = PrefrontalTurn(orchestrator, agent_id=conv.AGENT)
        placing: dict[str, Any] = (
            {"prompt": turn.prompt} if seat == "prompt" else {"pre_model_hook": turn.before_model}
        )
        agent = create_react_agent(
            model, [check_calendar], post_model_hook=turn.after_model, **placing
        )
        for text in conv.INPUTS:
            await agent.ainvoke({"messages": [HumanMessage(text)]}, CONFIG)
        asked = turn.turns.last[(conv.USER, conv.SESSION)]
        assert len(turn.turns.ended) == 1
        assert turn.turns.pending(conv.USER, conv.SESSION) is None

    seen = first_inputs(model)
    assert len(seen) == len(conv.INPUTS)
    assert [conv.pairs(s) for s in seen] == [conv.pairs(s) for s in direct.inputs]
    at_ask = seen[conv.ASK_TURN - 1]
    assert any(conv.FACT_WORDS in m["content"] for m in at_ask)
    assert not any(conv.FACT_WORDS in m["content"] for m in at_ask if m["role"] == "system")
    assert at_ask[-1] == Message(role="user", content=conv.INPUTS[conv.ASK_TURN - 1])
    provenance = conv.fact_provenance(asked)
    assert provenance
    assert provenance == conv.fact_provenance(direct.results[conv.ASK_TURN - 1])
    # The tool round: the second call of turn 4 carries the call and its result.
    tool_round = [m.type for m in model.seen[conv.TOOL_TURN]]
    assert tool_round[-2:] == ["ai", "tool"]
    assert conv.TOOL_RESULT in str(model.seen[conv.TOOL_TURN][-1].content)


async def test_hand_built_graph_starts_and_ends_turns(tmp_path: Path) -> None:
    async with conv.orchestrator_on("memory", tmp_path / "direct") as orchestrator:
        direct = await conv.direct_run(orchestrator, tools=False)
    replies = iter([conv.reply_for(t) for t in range(1, len(conv.INPUTS) + 1)])
    model = RecordingModel(messages=(AIMessage(content=r) for r in replies))

    async def call_model(state: PrefrontalState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["llm_input_messages"])]}

    async with conv.orchestrator_on("memory", tmp_path / "graph") as orchestrator:
        turn = PrefrontalTurn(orchestrator, agent_id=conv.AGENT, user_id=conv.USER)
        builder = StateGraph(PrefrontalState)
        builder.add_node("remember", turn.before_model)
        builder.add_node("model", call_model)
        builder.add_node("record", turn.after_model)
        builder.add_edge(START, "remember")
        builder.add_edge("remember", "model")
        builder.add_edge("model", "record")
        builder.add_edge("record", END)
        graph = builder.compile()
        config: RunnableConfig = {"configurable": {"thread_id": conv.SESSION}}
        for text in conv.INPUTS:
            await graph.ainvoke(PrefrontalState(messages=[HumanMessage(text)]), config)
        ended = await orchestrator.stores.conversation.recent(
            conv.tenant(), limit=100, session_id=conv.SESSION
        )

    seen = [as_messages(s) for s in model.seen]
    assert [conv.pairs(s) for s in seen] == [conv.pairs(s) for s in direct.inputs]
    assert any(conv.FACT_WORDS in m["content"] for m in seen[conv.ASK_TURN - 1])
    assert len(ended) == 2 * len(conv.INPUTS)
    assert [t.content for t in ended][-2:] == [conv.INPUTS[-1], conv.reply_for(10)]


async def test_a_turn_needs_a_user_and_a_thread(tmp_path: Path) -> None:
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        turn = PrefrontalTurn(orchestrator, agent_id=conv.AGENT)
        with pytest.raises(ValueError, match="user_id and thread_id"):
            await turn.before_model({"messages": [HumanMessage("hi")]}, {"configurable": {}})
        with pytest.raises(ValueError, match="no user message"):
            await turn.before_model({"messages": []}, CONFIG)
