"""What each framework integration costs per turn, against calling the orchestrator directly.

``python -m tests.benchmarks.integration_overhead`` plays the ten-turn
conversation of :mod:`tests.integrations.conversation` (a tool call at turn
4) on fresh in-memory stores seeded with the demo agent, ``--rounds`` times
in each mode, the modes taking turns round by round:

- ``direct``: ``start_turn``, ``bundle.to_messages``, ``end_turn``;
- ``langgraph``: ``create_react_agent`` with ``PrefrontalTurn.prompt`` (the
  model's input, in the model's node), its ``after_model`` as the
  ``post_model_hook``, and langchain-core's fake chat model;
- ``openai_agents``: ``Runner.run`` with ``PrefrontalSession`` and the
  SDK's ``ScriptedModel`` (tracing off);
- ``pydantic_ai``: ``agent.run`` with ``PrefrontalMemory`` and
  ``FunctionModel``.

and each framework ``_bare``: the same agent and model without prefrontal.
The models answer at once, so a mode's time is prefrontal's turn plus the
framework's own machinery and the integration; a mode less its ``_bare``
twin and ``direct`` is what the integration itself adds. It prints one JSON
line per mode: ``per_turn_ms`` (the median round's wall time over its
turns) and ``ratio`` (that over ``direct``'s, in the same run), and the same
for the process's CPU time (``cpu_per_turn_ms``, ``cpu_ratio``: the steadier
figures on a shared machine); a framework's line adds ``added_cpu_ms``, its
CPU per turn less its ``_bare`` twin's and ``direct``'s. Figures are
reported, never asserted.

``--replayed`` takes prefrontal's turns out of the measure: every mode runs
against a :class:`ReplayedOrchestrator`, which answers ``start_turn`` with
the turn a real orchestrator started for the same input (recorded once,
untimed) and ``end_turn`` with its recorded end. ``direct`` then costs next
to nothing, and a framework's ``added_cpu_ms`` is the integration's own
work (converting, placing, recording the run's items) plus what the
framework spends on the seats it hooks.

``--against SRC`` compares with another checkout's ``src`` in the same
run: the benchmark runs in child processes (:mod:`tests.benchmarks.child`),
``--alternations`` times for this checkout and for ``SRC`` in turn, each
child ``--rounds`` rounds, and prints one JSON line per mode with the
median child's ``cpu_per_turn_ms`` and ``added_cpu_ms`` of each (``this_``,
``against_``) and ``speedup`` (against over this, CPU per turn). A mode
uses the seats its checkout offers (LangGraph: ``PrefrontalTurn.prompt``
where there is one, else its ``pre_model_hook``).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.demo import seed
from prefrontal.exchange.models import EndTurnResult
from prefrontal.turn import TurnResult
from tests.benchmarks import child
from tests.conftest import counting_ids, fixed_clock
from tests.integrations import conversation as conv

Mode = Callable[[Orchestrator], Awaitable[None]]


async def direct(orchestrator: Orchestrator) -> None:
    for turn, text in enumerate(conv.INPUTS, start=1):
        request = TurnRequest(
            agent_id=conv.AGENT, user_id=conv.USER, session_id=conv.SESSION, user_input=text
        )
        result = await orchestrator.start_turn(request)
        result.bundle.to_messages(user_input=text)
        await orchestrator.end_turn(
            result, conv.reply_for(turn), tool_calls=conv.tool_calls_for(turn)
        )


async def langgraph(orchestrator: Orchestrator) -> None:
    from langchain_core.messages import HumanMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import tool

    from prefrontal.integrations.langgraph import PrefrontalTurn
    from tests.integrations.test_langgraph_turns import RecordingModel, scripted_replies

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

    @tool
    def check_calendar(day: str) -> str:
        """Whether a day is free in the user's calendar."""
        return conv.TOOL_RESULT

    turn = PrefrontalTurn(orchestrator, agent_id=conv.AGENT)
    # The seat the measured checkout offers (another checkout's, with --against).
    placing: dict[str, Any] = (
        {"prompt": turn.prompt}
        if hasattr(turn, "prompt")
        else {"pre_model_hook": turn.before_model}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(
            RecordingModel(messages=scripted_replies()),
            [check_calendar],
            post_model_hook=turn.after_model,
            **placing,
        )
    config: RunnableConfig = {"configurable": {"thread_id": conv.SESSION, "user_id": conv.USER}}
    for text in conv.INPUTS:
        await agent.ainvoke({"messages": [HumanMessage(text)]}, config)


async def openai_agents(orchestrator: Orchestrator) -> None:
    from agents import Agent, Runner
    from agents.testing.model import ScriptedModel

    from prefrontal.integrations.openai_agents import PrefrontalSession
    from tests.integrations.test_openai_agents import check_calendar, script

    session = PrefrontalSession(
        orchestrator, agent_id=conv.AGENT, user_id=conv.USER, session_id=conv.SESSION
    )
    agent = Agent(
        name="atlas",
        instructions=session.instructions,
        model=ScriptedModel(script()),
        tools=[check_calendar],
    )
    for text in conv.INPUTS:
        await Runner.run(
            agent, text, session=session, run_config=session.run_config(tracing_disabled=True)
        )


async def pydantic_ai(orchestrator: Orchestrator) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    from prefrontal.integrations.pydantic_ai import PrefrontalDeps, PrefrontalMemory
    from tests.integrations.test_pydantic_ai import Recorder, check_calendar

    memory = PrefrontalMemory(orchestrator, agent_id=conv.AGENT)
    agent = Agent(
        FunctionModel(Recorder()),
        instructions=memory.instructions,
        capabilities=memory.capabilities(),
        tools=[check_calendar],
    )
    deps = PrefrontalDeps(user_id=conv.USER, session_id=conv.SESSION)
    for text in conv.INPUTS:
        await agent.run(text, deps=deps)


async def langgraph_bare(orchestrator: Orchestrator) -> None:
    """The same agent and model without prefrontal (no hooks): the framework's own time."""
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool

    from tests.integrations.test_langgraph_turns import RecordingModel, scripted_replies

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

    @tool
    def check_calendar(day: str) -> str:
        """Whether a day is free in the user's calendar."""
        return conv.TOOL_RESULT

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(RecordingModel(messages=scripted_replies()), [check_calendar])
    for text in conv.INPUTS:
        await agent.ainvoke({"messages": [HumanMessage(text)]})


async def openai_agents_bare(orchestrator: Orchestrator) -> None:
    """The same agent and model without prefrontal (no session): the framework's own time."""
    from agents import Agent, RunConfig, Runner
    from agents.testing.model import ScriptedModel

    from tests.integrations.test_openai_agents import check_calendar, script

    agent = Agent(name="atlas", model=ScriptedModel(script()), tools=[check_calendar])
    for text in conv.INPUTS:
        await Runner.run(agent, text, run_config=RunConfig(tracing_disabled=True))


async def pydantic_ai_bare(orchestrator: Orchestrator) -> None:
    """The same agent and model without prefrontal: the framework's own time."""
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    from tests.integrations.test_pydantic_ai import Recorder, check_calendar

    agent = Agent(FunctionModel(Recorder()), tools=[check_calendar])
    for text in conv.INPUTS:
        await agent.run(text)


MODES: dict[str, Mode] = {
    "direct": direct,
    "langgraph": langgraph,
    "openai_agents": openai_agents,
    "pydantic_ai": pydantic_ai,
    "langgraph_bare": langgraph_bare,
    "openai_agents_bare": openai_agents_bare,
    "pydantic_ai_bare": pydantic_ai_bare,
}


class ReplayedOrchestrator(Orchestrator):
    """An orchestrator whose turns are recorded ones: ``start_turn`` and ``end_turn`` replay them.

    ``started`` maps a user input to the turn started for it; ``ended`` is
    what ``end_turn`` returns. Nothing is read or written per turn.
    """

    def __init__(
        self, stores: Stores, started: dict[str, TurnResult], ended: EndTurnResult
    ) -> None:
        super().__init__(stores, clock=fixed_clock, ids=counting_ids())
        self.started = started
        self.ended = ended

    async def start_turn(self, request: TurnRequest) -> TurnResult:
        return self.started[request.user_input]

    async def end_turn(self, turn: TurnResult | str, reply: str, **_: Any) -> EndTurnResult:
        return self.ended


async def recorded_turns() -> tuple[dict[str, TurnResult], EndTurnResult]:
    """The conversation's turns, played once on seeded in-memory stores, for replaying."""
    stores = Stores.in_memory()
    await seed(stores)
    started: dict[str, TurnResult] = {}
    ended: EndTurnResult | None = None
    async with Orchestrator(stores, clock=fixed_clock, ids=counting_ids()) as orchestrator:
        for turn, text in enumerate(conv.INPUTS, start=1):
            request = TurnRequest(
                agent_id=conv.AGENT, user_id=conv.USER, session_id=conv.SESSION, user_input=text
            )
            started[text] = await orchestrator.start_turn(request)
            ended = await orchestrator.end_turn(
                started[text], conv.reply_for(turn), tool_calls=conv.tool_calls_for(turn)
            )
    assert ended is not None
    return started, ended


Replay = tuple[dict[str, TurnResult], EndTurnResult]


async def _timed(mode: Mode, replay: Replay | None) -> tuple[float, float]:
    """Wall and CPU seconds for the ten turns of ``mode`` on fresh seeded stores (set-up untimed)."""
    stores = Stores.in_memory()
    await seed(stores)
    orchestrator = (
        Orchestrator(stores, clock=fixed_clock, ids=counting_ids())
        if replay is None
        else ReplayedOrchestrator(stores, *replay)
    )
    async with orchestrator:
        started, cpu = time.perf_counter(), time.process_time()
        await mode(orchestrator)
        return time.perf_counter() - started, time.process_time() - cpu


async def run(rounds: int, replayed: bool = False) -> list[dict[str, Any]]:
    """Each mode's median per-turn time over ``rounds`` rounds, and its ratio to ``direct``."""
    replay = await recorded_turns() if replayed else None
    walls: dict[str, list[float]] = {name: [] for name in MODES}
    cpus: dict[str, list[float]] = {name: [] for name in MODES}
    for mode in MODES.values():  # one untimed round each: imports, caches
        await _timed(mode, replay)
    for _ in range(rounds):
        for name, mode in MODES.items():
            wall, cpu = await _timed(mode, replay)
            walls[name].append(wall)
            cpus[name].append(cpu)
    turns = len(conv.INPUTS)
    wall_ms = {name: statistics.median(t) / turns * 1_000 for name, t in walls.items()}
    cpu_ms = {name: statistics.median(t) / turns * 1_000 for name, t in cpus.items()}
    rows: list[dict[str, Any]] = []
    for name in MODES:
        row: dict[str, Any] = {
            "mode": name,
            "turns_replayed": replayed,
            "per_turn_ms": round(wall_ms[name], 3),
            "ratio": round(wall_ms[name] / wall_ms["direct"], 2),
            "cpu_per_turn_ms": round(cpu_ms[name], 3),
            "cpu_ratio": round(cpu_ms[name] / cpu_ms["direct"], 2),
            "rounds": rounds,
            "turns": turns,
        }
        if f"{name}_bare" in MODES:
            added = cpu_ms[name] - cpu_ms[f"{name}_bare"] - cpu_ms["direct"]
            row["added_cpu_ms"] = round(added, 3)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--replayed", action="store_true", help="replay recorded turns: the integrations alone"
    )
    parser.add_argument("--against", type=Path, help="another checkout's src, same run")
    parser.add_argument("--alternations", type=int, default=3, help="children each, with --against")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against is not None:
        arguments = ("--rounds", str(args.rounds), *(["--replayed"] if args.replayed else []))
        found = child.alternated(
            "tests.benchmarks.integration_overhead",
            args.against.resolve(),
            arguments,
            args.alternations,
        )
        rows = child.compared(found, ("cpu_per_turn_ms", "added_cpu_ms"))
        rows = [{**row, "turns_replayed": args.replayed, "rounds": args.rounds} for row in rows]
    else:
        rows = anyio.run(run, args.rounds, args.replayed)
    child.print_rows(rows, as_child=args.child)


if __name__ == "__main__":
    main()
