"""Each framework with prefrontal against the same framework with its own default memory.

``python -m tests.benchmarks.framework_memory_overhead --backend memory``
plays the ten-turn conversation of :mod:`tests.integrations.conversation`
(a tool call at turn 4), ``--rounds`` times per mode, the modes taking turns
round by round, in one process:

- ``<framework>``: the integration (:mod:`tests.benchmarks.integration_overhead`'s
  modes) over prefrontal on ``--backend`` (in-memory stores or a SQLite
  file, seeded with the demo agent; a fresh set each round);
- ``<framework>_default``: the same agent and scripted model with the
  framework's own memory: LangGraph's ``InMemorySaver`` checkpointer and
  ``InMemoryStore``, the Agents SDK's ``SQLiteSession`` (in memory),
  pydantic-ai's ``message_history`` carried from run to run;
- ``<framework>_bare``: the same agent and model with no memory at all;
- ``direct``: prefrontal's turns alone (``start_turn``, ``to_messages``,
  ``end_turn``), to show how much of a framework mode is prefrontal's turn.

Both sides make the same model calls (eleven: the scripted replies, one
tool call) over the same ten inputs; each default memory does what it does
by default (the checkpointer saves every step and hands the model the
whole thread; the session stores and replays every item; the history is
passed back whole).

It prints one JSON line per mode: the median round's process CPU time per
turn (``cpu_per_turn_ms``) and, for a framework, ``cpu_ratio`` over its
``_default`` twin measured in the same run, ``default_memory_ms`` (the
default less ``_bare``: what the framework's own memory costs a turn),
``added_ms`` (the framework mode less ``_bare`` and ``direct``: what the
integration and the seats it hooks add to prefrontal's turn) and
``turn_for_1_5x_ms``: the ``direct`` turn at which ``cpu_ratio`` would be
1.5 with everything else as measured. Figures are reported, never asserted.

``--against SRC`` compares with another checkout's ``src`` in the same
run: the benchmark runs in child processes (:mod:`tests.benchmarks.child`),
``--alternations`` times for this checkout and for ``SRC`` in turn, each
child ``--rounds`` rounds. It prints one JSON line per mode with the
median child's ``cpu_per_turn_ms`` of each (``this``, ``against``),
``speedup`` (against over this) and, for a framework, both ``cpu_ratio``
figures. A framework mode uses the seats its checkout offers (LangGraph:
``PrefrontalTurn.prompt`` where there is one, else its ``pre_model_hook``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from prefrontal import Orchestrator, Stores
from prefrontal.demo import seed
from prefrontal.stores import sqlite
from tests.benchmarks import child
from tests.benchmarks import integration_overhead as prefrontal_modes
from tests.conftest import counting_ids, fixed_clock
from tests.integrations import conversation as conv

Default = Callable[[], Awaitable[None]]


async def langgraph_default() -> None:
    """create_react_agent with LangGraph's in-memory checkpointer and store."""
    from langchain_core.messages import HumanMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

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
        agent = create_react_agent(
            RecordingModel(messages=scripted_replies()),
            [check_calendar],
            checkpointer=InMemorySaver(),
            store=InMemoryStore(),
        )
    config: RunnableConfig = {"configurable": {"thread_id": conv.SESSION, "user_id": conv.USER}}
    for text in conv.INPUTS:
        await agent.ainvoke({"messages": [HumanMessage(text)]}, config)


async def openai_agents_default() -> None:
    """Runner.run with the SDK's SQLiteSession (in memory)."""
    from agents import Agent, RunConfig, Runner, SQLiteSession
    from agents.testing.model import ScriptedModel

    from tests.integrations.test_openai_agents import check_calendar, script

    session = SQLiteSession(conv.SESSION)
    agent = Agent(name="atlas", model=ScriptedModel(script()), tools=[check_calendar])
    for text in conv.INPUTS:
        await Runner.run(agent, text, session=session, run_config=RunConfig(tracing_disabled=True))
    session.close()


async def pydantic_ai_default() -> None:
    """agent.run with each run's messages carried to the next as message_history."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models.function import FunctionModel

    from tests.integrations.test_pydantic_ai import Recorder, check_calendar

    agent = Agent(FunctionModel(Recorder()), tools=[check_calendar])
    history: list[ModelMessage] = []
    for text in conv.INPUTS:
        result = await agent.run(text, message_history=history)
        history = result.all_messages()


DEFAULTS: dict[str, Default] = {
    "langgraph": langgraph_default,
    "openai_agents": openai_agents_default,
    "pydantic_ai": pydantic_ai_default,
}


async def _prefrontal(mode: prefrontal_modes.Mode, backend: str, folder: Path) -> float:
    """CPU seconds of ``mode``'s ten turns on fresh seeded stores (set-up untimed)."""
    if backend == "memory":
        stores = Stores.in_memory()
    else:
        stores = sqlite.open_stores(folder / f"{time.perf_counter_ns()}.db")
    await seed(stores)
    async with Orchestrator(stores, clock=fixed_clock, ids=counting_ids()) as orchestrator:
        cpu = time.process_time()
        await mode(orchestrator)
        return time.process_time() - cpu


async def _default(mode: Default) -> float:
    cpu = time.process_time()
    await mode()
    return time.process_time() - cpu


async def run(rounds: int, backend: str) -> list[dict[str, Any]]:
    """Median CPU per turn of every mode over ``rounds`` rounds, and each framework's ratio."""
    names = [
        "direct",
        *DEFAULTS,
        *(f"{name}_default" for name in DEFAULTS),
        *(f"{name}_bare" for name in DEFAULTS),
    ]
    cpus: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(rounds + 1):  # the first round is untimed: imports, caches
            for name in names:
                if name.endswith("_default"):
                    spent = await _default(DEFAULTS[name.removesuffix("_default")])
                else:
                    spent = await _prefrontal(prefrontal_modes.MODES[name], backend, Path(folder))
                if attempt:
                    cpus[name].append(spent)
    turns = len(conv.INPUTS)
    per_turn = {name: statistics.median(t) / turns * 1_000 for name, t in cpus.items()}
    rows: list[dict[str, Any]] = []
    for name in names:
        row: dict[str, Any] = {
            "mode": name,
            "backend": "none" if name.endswith(("_default", "_bare")) else backend,
            "cpu_per_turn_ms": round(per_turn[name], 3),
            "rounds": rounds,
        }
        if name in DEFAULTS:
            default, bare = per_turn[f"{name}_default"], per_turn[f"{name}_bare"]
            row["cpu_ratio"] = round(per_turn[name] / default, 2)
            row["default_memory_ms"] = round(default - bare, 3)
            row["added_ms"] = round(per_turn[name] - bare - per_turn["direct"], 3)
            row["turn_for_1_5x_ms"] = round(1.5 * default - per_turn[name] + per_turn["direct"], 3)
        rows.append(row)
    return rows


def against(source: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """This checkout and ``source`` in alternating children: each mode's median child, and both."""
    arguments = ("--rounds", str(args.rounds), "--backend", args.backend)
    found = child.alternated(
        "tests.benchmarks.framework_memory_overhead", source, arguments, args.alternations
    )
    rows = child.compared(found, ("cpu_per_turn_ms", "cpu_ratio"))
    return [{**row, "backend": args.backend, "rounds": args.rounds} for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--backend", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--against", type=Path, help="another checkout's src, same run")
    parser.add_argument("--alternations", type=int, default=3, help="children each, with --against")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against is not None:
        rows = against(args.against.resolve(), args)
    else:
        rows = anyio.run(run, args.rounds, args.backend)
    child.print_rows(rows, as_child=args.child)


if __name__ == "__main__":
    main()
