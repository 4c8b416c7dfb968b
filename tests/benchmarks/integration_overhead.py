"""What each framework integration costs per turn, against calling the orchestrator directly.

``python -m tests.benchmarks.integration_overhead`` plays the ten-turn
conversation of :mod:`tests.integrations.conversation` (a tool call at turn
4) on fresh in-memory stores seeded with the demo agent, ``--rounds`` times
in each mode, the modes taking turns round by round:

- ``direct``: ``start_turn``, ``bundle.to_messages``, ``end_turn``;
- ``langgraph``: ``create_react_agent`` with ``PrefrontalTurn``'s hooks and
  langchain-core's fake chat model;
- ``openai_agents``: ``Runner.run`` with ``PrefrontalSession`` and the
  SDK's ``ScriptedModel`` (tracing off);
- ``pydantic_ai``: ``agent.run`` with ``PrefrontalMemory`` and
  ``FunctionModel``.

and each framework ``_bare``: the same agent and model without prefrontal.
The models answer at once, so a mode's time is prefrontal's turn plus the
framework's own machinery and the integration; a mode less its ``_bare``
twin and ``direct`` is what the integration itself adds. It prints one JSON
line per mode: ``per_turn_ms`` (the median round's time over its turns) and
``ratio`` (that over ``direct``'s, in the same run). Figures are reported,
never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.demo import seed
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(
            RecordingModel(messages=scripted_replies()),
            [check_calendar],
            pre_model_hook=turn.before_model,
            post_model_hook=turn.after_model,
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


async def _timed(mode: Mode) -> float:
    """Seconds for the ten turns of ``mode`` on fresh seeded stores (set-up untimed)."""
    stores = Stores.in_memory()
    await seed(stores)
    async with Orchestrator(stores, clock=fixed_clock, ids=counting_ids()) as orchestrator:
        started = time.perf_counter()
        await mode(orchestrator)
        return time.perf_counter() - started


async def run(rounds: int) -> list[dict[str, Any]]:
    """Each mode's median per-turn time over ``rounds`` rounds, and its ratio to ``direct``."""
    times: dict[str, list[float]] = {name: [] for name in MODES}
    for mode in MODES.values():  # one untimed round each: imports, caches
        await _timed(mode)
    for _ in range(rounds):
        for name, mode in MODES.items():
            times[name].append(await _timed(mode))
    per_turn = {name: statistics.median(t) / len(conv.INPUTS) * 1_000 for name, t in times.items()}
    return [
        {
            "mode": name,
            "per_turn_ms": round(ms, 3),
            "ratio": round(ms / per_turn["direct"], 2),
            "rounds": rounds,
            "turns": len(conv.INPUTS),
        }
        for name, ms in per_turn.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    for row in anyio.run(run, args.rounds):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
