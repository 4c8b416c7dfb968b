"""The OpenAI Agents SDK: ``PrefrontalSession`` with the SDK's ``ScriptedModel`` (no network, no key).

Ten turns through ``Runner.run``, with a tool call, on memory, SQLite and
PostgreSQL: at every turn the model gets what the orchestrator called
directly gives (system part as instructions, prefrontal's context, the
input as given), turn 9 holds turn 2's fact with the same provenance, each
run's end records the exchange, and the session's items are exactly those
the SDK's own ``SQLiteSession`` keeps for the same run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, SQLiteSession, function_tool
from agents.memory import SessionSettings
from agents.testing.model import ScriptedModel
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from prefrontal.integrations.openai_agents import PrefrontalSession, text_of
from prefrontal.integrations.turns import split
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores import Tenant, sqlite
from tests.conftest import fixed_clock
from tests.integrations import conversation as conv

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


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


def session_of(orchestrator: Orchestrator, **options: Any) -> PrefrontalSession:
    return PrefrontalSession(
        orchestrator, agent_id=conv.AGENT, user_id=conv.USER, session_id=conv.SESSION, **options
    )


async def sdk_default_items() -> list[Any]:
    """The items the SDK's own ``SQLiteSession`` keeps for the same ten scripted turns."""
    session = SQLiteSession("default")
    agent = Agent(
        name="atlas",
        instructions="You help.",
        model=ScriptedModel(script()),
        tools=[check_calendar],
    )
    for text in conv.INPUTS:
        await Runner.run(agent, text, session=session)
    items = await session.get_items()
    session.close()
    return items


@pytest.mark.parametrize("backend", conv.BACKENDS)
async def test_ten_turns_with_a_tool_call_see_what_the_orchestrator_gives(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Each turn's model input is the direct turn's, and the items are SQLiteSession's, on each backend."""
    dsn = conv.dsn_for(backend, request)
    async with conv.orchestrator_on(backend, tmp_path / "direct", dsn) as orchestrator:
        direct = await conv.direct_run(orchestrator)
    model = ScriptedModel(script())
    async with conv.orchestrator_on(backend, tmp_path / "agents", dsn) as orchestrator:
        session = session_of(orchestrator)
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
        items = await session.get_items()
        again = await session_of(orchestrator).get_items()

    model.assert_complete()
    calls = [c for i, c in enumerate(model.calls) if i != conv.TOOL_TURN]
    seen = [as_pairs(c.system_instructions, c.input) for c in calls]
    expected = []
    for text, started in zip(conv.INPUTS, direct.results, strict=True):
        placed = split(started.bundle.to_messages())
        expected.append(
            as_pairs(placed.instructions, [*placed.messages, {"role": "user", "content": text}])
        )
    assert seen == expected
    assert any(conv.FACT_WORDS in content for _, content in seen[conv.ASK_TURN - 1])
    assert conv.FACT_WORDS not in (calls[conv.ASK_TURN - 1].system_instructions or "")
    assert conv.fact_provenance(asked)
    assert conv.fact_provenance(asked) == conv.fact_provenance(direct.results[conv.ASK_TURN - 1])
    assert outputs == [conv.reply_for(t) for t in range(1, len(conv.INPUTS) + 1)]
    assert len(items) == 22
    assert items == await sdk_default_items()
    assert again == items


async def test_the_tool_round_carries_the_call_and_its_output(tmp_path: Path) -> None:
    """The model's second request of a tool turn holds the call and its output; the turn records the tool."""
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
        kinds = [i.get("type", "message") for i in await session.get_items()]
        assert kinds == ["message", "function_call", "function_call_output", "message"]


class ReadCounting(PrefrontalSession):
    """A session that notes the limit of every ``get_items`` call."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits: list[int | None] = []

    async def get_items(self, limit: int | None = None) -> Any:
        self.limits.append(limit)
        return await super().get_items(limit)


async def test_a_placed_run_reads_no_stored_items(tmp_path: Path) -> None:
    """Without a history choice the SDK asks for no items (limit 0); prefrontal's context still comes."""
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        session = ReadCounting(orchestrator, agent_id="a", user_id="u", session_id="s")
        model = ScriptedModel([said("First reply."), said("Second reply.")])
        agent = Agent(name="a", instructions=session.instructions, model=model)
        config = session.run_config(tracing_disabled=True)
        assert config.session_settings is not None and config.session_settings.limit == 0
        for text in ("Hello there", "And again"):
            await Runner.run(agent, text, session=session, run_config=config)
            assert session.ended is not None and session.ended.written
        assert session.limits == [0, 0]
        assert len(await session.get_items()) == 4
        second = [text_of(item) for item in model.calls[1].input]
        assert second[-1] == "And again"
        assert any("First reply." in text for text in second[:-1])


async def test_items_added_outside_a_run_are_kept_and_popped(tmp_path: Path) -> None:
    """add_items without a run keeps the items as given; pop takes the newest; clear empties."""
    part = {"role": "user", "content": [{"type": "input_text", "text": "see"}], "id": "m1"}
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        assert await session.pop_item() is None
        await session.add_items([{"role": "user", "content": "draft"}, part])  # type: ignore[list-item]
        assert await session.get_items() == [{"role": "user", "content": "draft"}, part]
        assert await session.pop_item() == part
        await session.clear_session()
        assert await session.get_items() == []
        assert await session.get_items(limit=5) == []
        with pytest.raises(ValueError, match="no user input"):
            await session.session_input([], [])


async def test_a_streamed_run_is_recorded_too(tmp_path: Path) -> None:
    """Run.run_streamed saves the input and reply as items and records the turn."""
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
        assert [(i["role"], text_of(i)) for i in items] == [  # type: ignore[typeddict-item]
            ("user", "Hello there"),
            ("assistant", "Streamed reply."),
        ]


async def test_limit_reads_as_the_sdks_sessions_read_it(tmp_path: Path) -> None:
    """limit=0 gives nothing, a positive limit the newest items, a negative one all; settings apply."""
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        assert session.session_settings == SessionSettings()
        await session.add_items([{"role": "user", "content": f"draft {n}"} for n in range(3)])
        assert await session.get_items(limit=0) == []
        assert [i["content"] for i in await session.get_items(limit=2)] == ["draft 1", "draft 2"]  # type: ignore[typeddict-item]
        assert len(await session.get_items(limit=-1)) == 3
        assert len(await session.get_items()) == 3
        limited = PrefrontalSession(
            orchestrator, agent_id="a", user_id="u", session_id="s", session_settings={"limit": 1}
        )
        assert [i["content"] for i in await limited.get_items()] == ["draft 2"]  # type: ignore[typeddict-item]
        assert len(await limited.get_items(limit=5)) == 3


async def test_session_objects_of_one_id_share_their_state(tmp_path: Path) -> None:
    """A second session object for the same id sees the first's items and started turn."""
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        first = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        second = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        other = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="t")
        await first.add_items([{"role": "user", "content": "draft"}])
        assert await second.get_items() == [{"role": "user", "content": "draft"}]
        assert await other.get_items() == []
        new = {"role": "user", "content": "Hello there"}
        await second.session_input([], [new])  # type: ignore[list-item]
        assert first.turns.pending("u", "s") is not None
        await first.add_items([new, {"role": "assistant", "content": "Hi."}])  # type: ignore[list-item]
        assert second.turns.pending("u", "s") is None
        assert first.ended is not None and first.ended.written
        stored = [(i["role"], i["content"]) for i in await second.get_items()]  # type: ignore[typeddict-item]
        assert stored == [("user", "draft"), ("user", "Hello there"), ("assistant", "Hi.")]


ANOTHER_PROCESS = """
import anyio, sys
from prefrontal.integrations.openai_agents import PrefrontalSession, text_of
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores import Tenant, sqlite
from tests.conftest import fixed_clock

async def main() -> None:
    stores = sqlite.open_stores(sys.argv[1])
    async with Orchestrator(stores, clock=fixed_clock) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        await session.add_items([{"type": "function_call", "call_id": "c", "name": "f",
                                  "arguments": "{}"}])
        print(len(await session.get_items()))
    await stores.aclose()

anyio.run(main)
"""


async def test_another_process_shares_the_items_on_sqlite(tmp_path: Path) -> None:
    """Items one process adds to a session id are read by another process, and back."""
    path = tmp_path / "shared.db"
    stores = sqlite.open_stores(path)
    async with Orchestrator(stores, clock=fixed_clock) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        await session.add_items([{"role": "user", "content": "from here"}])
        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
        with anyio.fail_after(120):
            done = await anyio.run_process(
                [sys.executable, "-c", ANOTHER_PROCESS, str(path)], env=env, cwd=ROOT
            )
        assert done.stdout.decode().split() == ["2"]
        items = await session.get_items()
    await stores.aclose()
    assert [i.get("type", "message") for i in items] == ["message", "function_call"]


async def test_a_callback_of_the_callers_own_chooses_the_history(tmp_path: Path) -> None:
    """run_config(session_input_callback=...) gets the history read with the settings' limit;
    the model gets prefrontal's data, then what the callback returns; the turn is recorded."""
    seen: list[tuple[int, int]] = []

    def newest_two(history: list[Any], new_items: list[Any]) -> list[Any]:
        seen.append((len(history), len(new_items)))
        return [*history[-2:], *new_items]

    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        await orchestrator.memory.remember(
            Tenant(agent_id="a", user_id="u"), "The locker code is 4471."
        )
        model = ScriptedModel([said(f"Reply {n}.") for n in range(4)])
        agent = Agent(name="a", instructions=session.instructions, model=model)
        for n in range(3):
            await Runner.run(
                agent,
                f"Question {n} about the locker code?",
                session=session,
                run_config=session.run_config(tracing_disabled=True),
            )
        config = session.run_config(
            tracing_disabled=True,
            session_input_callback=newest_two,
            session_settings=SessionSettings(limit=5),
        )
        await Runner.run(
            agent, "Last question on the locker code?", session=session, run_config=config
        )
        assert session.ended is not None and session.ended.written
        items = await session.get_items()
    assert seen == [(5, 1)]
    last = model.calls[-1].input
    assert "4471" in str(last[0]["content"])
    assert last[1:] == [
        *items[4:6],
        {"role": "user", "content": "Last question on the locker code?"},
    ]
    assert len(items) == 8


async def test_a_limit_alone_replays_that_many_items_after_the_data(tmp_path: Path) -> None:
    """run_config(session_settings=SessionSettings(limit=2)): the newest two items, as given."""
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
        model = ScriptedModel([said(f"Reply {n}.") for n in range(3)])
        agent = Agent(name="a", instructions=session.instructions, model=model)
        for n in range(2):
            await Runner.run(
                agent, f"Question {n}?", session=session, run_config=session.run_config()
            )
        config = session.run_config(session_settings=SessionSettings(limit=2))
        await Runner.run(agent, "Third?", session=session, run_config=config)
        items = await session.get_items()
    last = model.calls[-1].input
    assert last[-3:] == [*items[2:4], {"role": "user", "content": "Third?"}]
    assert items[0] not in last and items[1] not in last
