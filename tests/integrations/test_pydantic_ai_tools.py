"""pydantic-ai: prefrontal's memory toolset called by the model over ten turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from prefrontal.integrations.pydantic_ai import PrefrontalDeps, PrefrontalMemory
from prefrontal.serving.keys import KeyGrant, Right
from tests.integrations import conversation as conv
from tests.integrations import tool_turns

pytestmark = pytest.mark.anyio


class ToolScript:
    """A ``FunctionModel`` function: remember at turn 2, recall at turn 9, keeping what tools said."""

    def __init__(self) -> None:
        self.turn = 0
        self.returned: dict[str, list[str]] = {}

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answers = [
            part
            for part in messages[-1].parts
            if isinstance(part, (ToolReturnPart, RetryPromptPart))
        ]
        if answers:
            for part in answers:
                text = (
                    part.model_response_str()
                    if isinstance(part, ToolReturnPart)
                    else str(part.content)
                )
                self.returned.setdefault(str(part.tool_name), []).append(text)
            return ModelResponse(parts=[TextPart(conv.reply_for(self.turn))])
        self.turn += 1
        called = tool_turns.tool_call_at(self.turn)
        if called is not None:
            name, args = called
            return ModelResponse(
                parts=[ToolCallPart(name, dict(args), tool_call_id=f"c{self.turn}")]
            )
        return ModelResponse(parts=[TextPart(conv.reply_for(self.turn))])


async def run_ten(orchestrator: Any, script: ToolScript, grant: KeyGrant | None = None) -> None:
    """The ten turns through agent.run with the memory's capabilities and toolset."""
    memory = PrefrontalMemory(orchestrator, agent_id=conv.AGENT)
    agent = Agent(
        FunctionModel(script),
        instructions=memory.instructions,
        capabilities=memory.capabilities(),
        toolsets=[memory.toolset(grant=grant)],
    )
    deps = PrefrontalDeps(user_id=conv.USER, session_id=conv.SESSION)
    for text in conv.INPUTS:
        result = await agent.run(text, deps=deps)
        assert result.output == conv.reply_for(script.turn)
    assert memory.turns.pending(conv.USER, conv.SESSION) is None


@pytest.mark.parametrize("backend", conv.BACKENDS)
async def test_ten_turns_with_memory_tool_calls(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Turn 2's remember call stores the fact; turn 9's recall gives it back to the model, fenced."""
    dsn = conv.dsn_for(backend, request)
    script = ToolScript()
    async with conv.orchestrator_on(backend, tmp_path, dsn) as orchestrator:
        await run_ten(orchestrator, script)
        await tool_turns.check_memory(orchestrator)
    (recall,) = script.returned["recall"]
    assert tool_turns.recalled(recall)
    (remember,) = script.returned["remember"]
    assert remember.startswith("Remembered (fact, id ")


async def test_a_read_only_key_is_refused_as_a_retry_prompt(tmp_path: Path) -> None:
    """With a read-only key, remember comes back to the model as a retry prompt; nothing is kept."""
    grant = KeyGrant(
        name="reader",
        sha256="0" * 64,
        agent_id=conv.AGENT,
        users=(conv.USER,),
        rights=(Right.READ,),
    )
    script = ToolScript()
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        await run_ten(orchestrator, script, grant)
        hits = await orchestrator.memory.recall(conv.tenant(), tool_turns.QUERY, top_k=20)
    assert [h for h in hits if h.item.content == tool_turns.REMEMBERED] == []
    (refused,) = script.returned["remember"]
    assert "lacks the 'write' right" in refused
    (recall,) = script.returned["recall"]
    assert not tool_turns.recalled(recall)
