"""The OpenAI Agents SDK: ``PrefrontalSession`` with the SDK's ``ScriptedModel`` (no network, no key).

Ten turns through ``Runner.run`` must give the model, at every turn, what
the orchestrator called directly gives (system part as instructions, the
rest as input), turn 9 holding turn 2's fact with the same provenance, on
memory and on SQLite; each run's end records the exchange.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, function_tool
from agents.testing.model import ScriptedModel
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from prefrontal.integrations.openai_agents import PrefrontalSession
from tests.integrations import conversation as conv

pytestmark = pytest.mark.anyio


def said(text: str) -> list[ResponseOutputMessage]:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return [
        ResponseOutputMessage(
            id="msg", type="message", role="assistant", status="completed", content=content
        )
    ]


def script() -> list[Any]:
    """The model's outputs over the ten turns: a function call at turn 4, then its reply."""
    steps: list[Any] = []
    for turn in range(1, len(conv.INPUTS) + 1):
        if turn == conv.TOOL_TURN:
            call = ResponseFunctionToolCall(
                type="function_call",
                call_id="call-1",
                name=conv.TOOL_NAME,
                arguments='{"day": "June 14"}',
                id="fc-1",
                status="completed",
            )
            steps.append([call])
        steps.append(said(conv.reply_for(turn)))
    return steps


@function_tool
def check_calendar(day: str) -> str:
    """Whether a day is free in the user's calendar."""
    return conv.TOOL_RESULT


def as_pairs(instructions: str | None, items: list[Any]) -> list[tuple[str, str]]:
    system = [("system", instructions)] if instructions else []
    return system + [(str(item["role"]), str(item["content"])) for item in items]


@pytest.mark.parametrize("backend", conv.BACKENDS)
async def test_runs_see_what_the_orchestrator_gives(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    dsn = conv.dsn_for(backend, request)
    async with conv.orchestrator_on(backend, tmp_path / "direct", dsn) as orchestrator:
        direct = await conv.direct_run(orchestrator)
    model = ScriptedModel(script())
    async with conv.orchestrator_on(backend, tmp_path / "agents", dsn) as orchestrator:
        session = PrefrontalSession(
            orchestrator, agent_id=conv.AGENT, user_id=conv.USER, session_id=conv.SESSION
        )
        agent = Agent(
            name="atlas", instructions=session.instructions, model=model, tools=[check_calendar]
        )
        outputs = []
        for text in conv.INPUTS:
            result = await Runner.run(
                agent, text, session=session, run_config=session.run_config(tracing_disabled=True)
            )
            outputs.append(result.final_output)
            assert session.ended is not None and session.ended.written
        asked = session.turns.last[(conv.USER, conv.SESSION)]
        history = await session.get_items()

    model.assert_complete()
    calls = [c for i, c in enumerate(model.calls) if i != conv.TOOL_TURN]
    seen = [as_pairs(c.system_instructions, c.input) for c in calls]
    assert seen == [conv.pairs(m) for m in direct.inputs]
    assert any(conv.FACT_WORDS in content for _, content in seen[conv.ASK_TURN - 1])
    assert conv.FACT_WORDS not in (calls[conv.ASK_TURN - 1].system_instructions or "")
    assert conv.fact_provenance(asked)
    assert conv.fact_provenance(asked) == conv.fact_provenance(direct.results[conv.ASK_TURN - 1])
    assert outputs == [conv.reply_for(t) for t in range(1, len(conv.INPUTS) + 1)]
    # The session's history is the stored conversation: every input and reply, in order.
    expected = [
        (role, text)
        for turn, said_text in enumerate(conv.INPUTS, start=1)
        for role, text in (("user", said_text), ("assistant", conv.reply_for(turn)))
    ]
    assert [(i["role"], i["content"]) for i in history] == expected  # type: ignore[typeddict-item]


async def test_the_tool_round_carries_the_call_and_its_output(tmp_path: Path) -> None:
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        model = ScriptedModel(script()[conv.TOOL_TURN - 1 : conv.TOOL_TURN + 1])
        agent = Agent(
            name="a", instructions=session.instructions, model=model, tools=[check_calendar]
        )
        await Runner.run(
            agent,
            "Is June 14 free?",
            session=session,
            run_config=session.run_config(tracing_disabled=True),
        )
        assert session.ended is not None
        assert any("tool" in i for i in session.ended.memory_ids)
        tool_round = model.calls[1].input
        assert [i.get("type") for i in tool_round[-2:]] == ["function_call", "function_call_output"]


async def test_pop_and_clear_act_on_the_run_in_progress(tmp_path: Path) -> None:
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        assert await session.pop_item() is None
        await session.add_items([{"role": "user", "content": "draft"}])
        assert await session.get_items() == [{"role": "user", "content": "draft"}]
        assert await session.pop_item() == {"role": "user", "content": "draft"}
        await session.add_items([{"role": "user", "content": "again"}])
        await session.clear_session()
        assert await session.get_items() == []
        assert await session.get_items(limit=5) == []
        with pytest.raises(ValueError, match="no user input"):
            await session.session_input([], [])


async def test_a_streamed_run_is_recorded_too(tmp_path: Path) -> None:
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        model = ScriptedModel([said("Streamed reply.")])
        agent = Agent(name="a", instructions=session.instructions, model=model)
        streamed = Runner.run_streamed(
            agent,
            "Hello there",
            session=session,
            run_config=session.run_config(tracing_disabled=True),
        )
        async for _ in streamed.stream_events():
            pass
        assert streamed.final_output == "Streamed reply."
        assert session.ended is not None and session.ended.written
        items = await session.get_items()
        assert [(i["role"], i["content"]) for i in items] == [  # type: ignore[typeddict-item]
            ("user", "Hello there"),
            ("assistant", "Streamed reply."),
        ]


async def test_limit_reads_as_the_sdks_sessions_read_it(tmp_path: Path) -> None:
    """limit=0 gives nothing, a positive limit the newest items, a negative one all; settings apply."""
    from agents.memory import SessionSettings

    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        await session.add_items([{"role": "user", "content": f"draft {n}"} for n in range(3)])
        assert await session.get_items(limit=0) == []
        assert [i["content"] for i in await session.get_items(limit=2)] == ["draft 1", "draft 2"]  # type: ignore[typeddict-item]
        assert len(await session.get_items(limit=-1)) == 3
        session.session_settings = SessionSettings(limit=1)
        assert [i["content"] for i in await session.get_items()] == ["draft 2"]  # type: ignore[typeddict-item]
        assert len(await session.get_items(limit=5)) == 3


async def test_session_objects_of_one_id_share_their_state(tmp_path: Path) -> None:
    """A second session object for the same id sees the first's run items and started turn."""
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        first = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        second = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        other = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="t")
        await first.add_items([{"role": "user", "content": "draft"}])
        assert await second.get_items() == [{"role": "user", "content": "draft"}]
        assert await other.get_items() == []
        await second.session_input([], [{"role": "user", "content": "Hello there"}])
        assert first.turns.pending("u", "s") is not None
        await first.add_items([{"role": "assistant", "content": "Hi."}])
        assert second.turns.pending("u", "s") is None
        stored = [(i["role"], i["content"]) for i in await second.get_items()]  # type: ignore[typeddict-item]
        assert stored == [("user", "Hello there"), ("assistant", "Hi.")]
