"""pydantic-ai: ``PrefrontalMemory`` with ``FunctionModel`` and ``TestModel`` (no network, no key).

Ten turns through ``agent.run`` must give the model, at every turn, what the
orchestrator called directly gives (the system part as instructions, the
rest as history and prompt), turn 9 holding turn 2's fact with the same
provenance, on memory and on SQLite; each run's end records the exchange.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from prefrontal.integrations.pydantic_ai import PrefrontalDeps, PrefrontalMemory
from tests.integrations import conversation as conv

pytestmark = pytest.mark.anyio


def as_pairs(messages: list[ModelMessage], instructions: str | None) -> list[tuple[str, str]]:
    """What the model was given, as ``(role, text)`` pairs (tool parts named by their kind)."""
    pairs = [("system", instructions)] if instructions else []
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                pairs.append(("user", str(part.content)))
            elif isinstance(part, TextPart):
                pairs.append(("assistant", part.content))
            else:
                pairs.append((part.part_kind, ""))
    return pairs


class Recorder:
    """A ``FunctionModel`` function: records each call, answers from the script."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []
        self.turn = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls.append(as_pairs(messages, info.instructions))
        last = messages[-1]
        if any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(parts=[TextPart(conv.reply_for(self.turn))])
        self.turn += 1
        if self.turn == conv.TOOL_TURN:
            call = ToolCallPart(conv.TOOL_NAME, dict(conv.TOOL_ARGUMENTS), tool_call_id="call-1")
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart(conv.reply_for(self.turn))])


def check_calendar(day: str) -> str:
    """Whether a day is free in the user's calendar."""
    return conv.TOOL_RESULT


@pytest.mark.parametrize("backend", conv.BACKENDS)
async def test_runs_see_what_the_orchestrator_gives(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    dsn = conv.dsn_for(backend, request)
    async with conv.orchestrator_on(backend, tmp_path / "direct", dsn) as orchestrator:
        direct = await conv.direct_run(orchestrator)
    recorder = Recorder()
    async with conv.orchestrator_on(backend, tmp_path / "pydantic", dsn) as orchestrator:
        memory = PrefrontalMemory(orchestrator, agent_id=conv.AGENT)
        agent = Agent(
            FunctionModel(recorder),
            instructions=memory.instructions,
            capabilities=memory.capabilities(),
            tools=[check_calendar],
        )
        deps = PrefrontalDeps(user_id=conv.USER, session_id=conv.SESSION)
        outputs = [(await agent.run(text, deps=deps)).output for text in conv.INPUTS]
        asked = memory.turns.last[(conv.USER, conv.SESSION)]
        stored = await orchestrator.stores.conversation.recent(
            conv.tenant(), limit=100, session_id=conv.SESSION
        )

    firsts = [c for i, c in enumerate(recorder.calls) if i != conv.TOOL_TURN]
    assert firsts == [conv.pairs(m) for m in direct.inputs]
    assert any(conv.FACT_WORDS in text for _, text in firsts[conv.ASK_TURN - 1])
    assert not any(
        conv.FACT_WORDS in text for role, text in firsts[conv.ASK_TURN - 1] if role == "system"
    )
    assert conv.fact_provenance(asked)
    assert conv.fact_provenance(asked) == conv.fact_provenance(direct.results[conv.ASK_TURN - 1])
    assert outputs == [conv.reply_for(t) for t in range(1, len(conv.INPUTS) + 1)]
    assert [t.content for t in stored][-2:] == [conv.INPUTS[-1], conv.reply_for(10)]
    # The tool round: the call and its return follow the prompt.
    assert [kind for kind, _ in recorder.calls[conv.TOOL_TURN][-2:]] == ["tool-call", "tool-return"]


async def test_test_model_runs_are_recorded_with_their_tool_calls(tmp_path: Path) -> None:
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        memory = PrefrontalMemory(orchestrator, agent_id="a")
        agent = Agent(
            TestModel(),
            instructions=memory.instructions,
            capabilities=memory.capabilities(),
            tools=[check_calendar],
        )
        result = await agent.run("Is June 14 free?", deps=PrefrontalDeps("u", "s"))
        stored = await orchestrator.stores.conversation.recent(
            conv.tenant().model_copy(update={"agent_id": "a", "user_id": "u"}), limit=10
        )
        assert [t.content for t in stored] == ["Is June 14 free?", str(result.output)]
        assert memory.turns.pending("u", "s") is None
        assert any(":tool:" in i for i in memory.turns.ended[("u", "s")].memory_ids)


async def test_a_run_needs_a_user_and_a_session(tmp_path: Path) -> None:
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        memory = PrefrontalMemory(orchestrator, agent_id="a")
        agent = Agent(TestModel(), instructions=memory.instructions)
        with pytest.raises(ValueError, match="user_id and session_id"):
            await agent.run("hello", deps=None)


def transcript(messages: list[ModelMessage]) -> list[tuple[str, str]]:
    """A run's messages as ``(part kind, text)`` pairs."""
    return [(p.part_kind, str(getattr(p, "content", ""))) for m in messages for p in m.parts]


async def test_all_messages_stay_the_runs_transcript(tmp_path: Path) -> None:
    """The model gets prefrontal's placing; result.all_messages() keeps the transcript as given."""
    recorder = Recorder()
    raw_text = "qzrawhistory, given by the caller"
    raw = ModelRequest(parts=[UserPromptPart(content=raw_text)])
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        memory = PrefrontalMemory(orchestrator, agent_id=conv.AGENT)
        agent = Agent(
            FunctionModel(recorder),
            instructions=memory.instructions,
            capabilities=memory.capabilities(),
            tools=[check_calendar],
        )
        deps = PrefrontalDeps(user_id=conv.USER, session_id=conv.SESSION)
        history: list[ModelMessage] = [raw]
        for text in conv.INPUTS[: conv.TOOL_TURN]:
            result = await agent.run(text, deps=deps, message_history=history)
            history = result.all_messages()
    said = transcript(history)
    prompts = [text for kind, text in said if kind == "user-prompt"]
    assert prompts == [raw_text, *conv.INPUTS[: conv.TOOL_TURN]]
    assert [kind for kind, _ in said].count("tool-call") == 1
    assert [kind for kind, _ in said].count("tool-return") == 1
    assert said[-1] == ("text", conv.reply_for(conv.TOOL_TURN))
    # The model never saw the caller's raw history: prefrontal placed the conversation.
    assert not any("qzrawhistory" in text for call in recorder.calls for _, text in call)
    assert any(conv.INPUTS[0] in text for _, text in recorder.calls[-1])


async def test_a_failed_run_records_its_user_message(tmp_path: Path) -> None:
    """A run whose model fails still records the user's message; the error reaches the caller."""

    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("model unavailable")

    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        memory = PrefrontalMemory(orchestrator, agent_id="a")
        agent = Agent(
            FunctionModel(broken),
            instructions=memory.instructions,
            capabilities=memory.capabilities(),
        )
        with pytest.raises(RuntimeError, match="model unavailable"):
            await agent.run("Book the Porto hotel", deps=PrefrontalDeps("u", "s"))
        stored = await orchestrator.stores.conversation.recent(
            conv.tenant().model_copy(update={"agent_id": "a", "user_id": "u"}), limit=10
        )
        assert [t.content for t in stored][:1] == ["Book the Porto hotel"]
        assert memory.turns.pending("u", "s") is None
        assert memory.turns.ended[("u", "s")].written
