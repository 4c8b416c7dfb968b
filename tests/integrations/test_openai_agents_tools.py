"""The Agents SDK: prefrontal's memory function tools called by the model over ten turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner
from agents.testing.model import ScriptedModel
from openai.types.responses import ResponseFunctionToolCall

from prefrontal.integrations.memory_tools import MemoryTools
from prefrontal.integrations.openai_agents import PrefrontalSession
from prefrontal.integrations.openai_agents_tools import memory_function_tools
from prefrontal.serving.keys import KeyGrant, Right
from tests.integrations import conversation as conv
from tests.integrations import tool_turns
from tests.integrations.test_openai_agents import said

pytestmark = pytest.mark.anyio


def script() -> list[Any]:
    """The model's outputs: remember at turn 2, recall at turn 9, a reply every turn."""
    steps: list[Any] = []
    for turn in range(1, len(conv.INPUTS) + 1):
        called = tool_turns.tool_call_at(turn)
        if called is not None:
            name, args = called
            steps.append(
                [
                    ResponseFunctionToolCall(
                        type="function_call",
                        call_id=f"call-{turn}",
                        name=name,
                        arguments=json.dumps(args),
                        id=f"fc-{turn}",
                        status="completed",
                    )
                ]
            )
        steps.append(said(conv.reply_for(turn)))
    return steps


def outputs_of(model: ScriptedModel, call_id: str) -> list[str]:
    """The outputs of the function call ``call_id`` the model was given."""
    return [
        str(item["output"])
        for call in model.calls
        if isinstance(call.input, list)
        for item in call.input
        if isinstance(item, dict)
        and item.get("type") == "function_call_output"
        and item.get("call_id") == call_id
    ]


async def run_ten(orchestrator: Any, model: ScriptedModel, tools: MemoryTools) -> None:
    """The ten turns through Runner.run with the session and the memory tools."""
    session = PrefrontalSession(
        orchestrator, agent_id=conv.AGENT, user_id=conv.USER, session_id=conv.SESSION
    )
    agent = Agent(
        name="atlas",
        instructions=session.instructions,
        model=model,
        tools=list(memory_function_tools(tools)),
    )
    for text in conv.INPUTS:
        await Runner.run(
            agent,
            text,
            session=session,
            context=session,
            run_config=session.run_config(tracing_disabled=True),
        )
        assert session.ended is not None and session.ended.written


@pytest.mark.parametrize("backend", conv.BACKENDS)
async def test_ten_turns_with_memory_tool_calls(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Turn 2's remember call stores the fact; turn 9's recall gives it back to the model, fenced."""
    dsn = conv.dsn_for(backend, request)
    model = ScriptedModel(script())
    async with conv.orchestrator_on(backend, tmp_path, dsn) as orchestrator:
        await run_ten(orchestrator, model, MemoryTools(orchestrator, agent_id=conv.AGENT))
        await tool_turns.check_memory(orchestrator)
    model.assert_complete()
    recall = outputs_of(model, f"call-{tool_turns.RECALL_TURN}")
    assert recall and all(tool_turns.recalled(text) for text in recall)
    remember = outputs_of(model, f"call-{tool_turns.REMEMBER_TURN}")
    assert remember and remember[0].startswith("Remembered (fact, id ")


async def test_a_read_only_key_is_refused_in_the_output(tmp_path: Path) -> None:
    """With a read-only key, the model is told the remember call was refused; nothing is kept."""
    grant = KeyGrant(
        name="reader",
        sha256="0" * 64,
        agent_id=conv.AGENT,
        users=(conv.USER,),
        rights=(Right.READ,),
    )
    model = ScriptedModel(script())
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        await run_ten(
            orchestrator, model, MemoryTools(orchestrator, agent_id=conv.AGENT, grant=grant)
        )
        hits = await orchestrator.memory.recall(conv.tenant(), tool_turns.QUERY, top_k=20)
    assert [h for h in hits if h.item.content == tool_turns.REMEMBERED] == []
    refused = outputs_of(model, f"call-{tool_turns.REMEMBER_TURN}")
    assert refused and refused[0].startswith("Refused: This API key lacks the 'write' right")
    recall = outputs_of(model, f"call-{tool_turns.RECALL_TURN}")
    assert recall and not any(tool_turns.recalled(text) for text in recall)
