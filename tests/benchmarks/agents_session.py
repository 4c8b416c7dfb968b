"""``PrefrontalSession`` against the Agents SDK's own ``SQLiteSession``: CPU a turn, and where it goes.

``python -m tests.benchmarks.agents_session --rounds 15`` plays the ten-turn
conversation of :mod:`tests.integrations.conversation` (a function call at
turn 4) through ``Runner.run`` with the SDK's ``ScriptedModel`` (answers at
once, tracing off), ``--rounds`` times per mode, the modes taking turns
round by round, each round on fresh stores:

- ``sdk_memory``: ``SQLiteSession(":memory:")``, the SDK's default session;
- ``prefrontal_memory``: ``PrefrontalSession`` on in-memory stores seeded
  with the demo agent, with ``run_config()`` and ``session.instructions``;
- ``sdk_sqlite`` / ``prefrontal_sqlite``: the same on a SQLite file each.

It prints one JSON line per mode: the median round's CPU time of the
process per turn (``cpu_per_turn_ms``) and wall time (``per_turn_ms``),
and for the prefrontal modes the ratio to the SDK mode of the same backend
in the same run (``cpu_ratio``, ``ratio``) and where their CPU went
(``parts_ms``, medians per turn): ``start_turn`` (the session input
callback: prefrontal's turn assembly), ``end_turn`` (recording the
exchange), ``items`` (reading and writing the session's items),
``instructions``, and ``sdk`` (the rest: the runner, the model, the tool).
Time spent in background work the turn started counts in the part it ran
under. Figures are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio

from prefrontal import Orchestrator, Stores
from prefrontal.demo import seed
from prefrontal.integrations.turns import FrameworkTurns
from prefrontal.stores import sqlite
from tests.conftest import counting_ids, fixed_clock
from tests.integrations import conversation as conv

T = TypeVar("T")
Parts = dict[str, float]


class Clocked:
    """CPU seconds spent inside the calls wrapped with :meth:`timed`, by part."""

    def __init__(self) -> None:
        self.parts: Parts = defaultdict(float)

    async def timed(self, part: str, call: Awaitable[T]) -> T:
        started = time.process_time()
        try:
            return await call
        finally:
            self.parts[part] += time.process_time() - started


def clocked_session(clock: Clocked) -> type:
    """A ``PrefrontalSession`` whose seats report their CPU to ``clock``."""
    from prefrontal.integrations.openai_agents import PrefrontalSession

    class ClockedTurns(FrameworkTurns):
        async def start(self, *args: Any, **kwargs: Any) -> Any:
            return await clock.timed("start_turn", super().start(*args, **kwargs))

        async def end(self, *args: Any, **kwargs: Any) -> Any:
            return await clock.timed("end_turn", super().end(*args, **kwargs))

    class ClockedItems:
        def __init__(self, store: Any) -> None:
            self.store = store

        def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
            method = getattr(self.store, name)

            async def call(*args: Any, **kwargs: Any) -> Any:
                return await clock.timed("items", method(*args, **kwargs))

            return call

    class ClockedSession(PrefrontalSession):
        def __init__(self, orchestrator: Orchestrator, **options: Any) -> None:
            turns = ClockedTurns(orchestrator, agent_id=options["agent_id"])
            super().__init__(orchestrator, turns=turns, **options)
            self._items = ClockedItems(self._items)  # type: ignore[assignment]

        async def instructions(self, context: Any, agent: Any) -> str:
            return await clock.timed("instructions", super().instructions(context, agent))

    return ClockedSession


@asynccontextmanager
async def orchestrator_on(backend: str, folder: Path) -> AsyncIterator[Orchestrator]:
    stores = Stores.in_memory() if backend == "memory" else sqlite.open_stores(folder / "p.db")
    await seed(stores)
    try:
        async with Orchestrator(stores, clock=fixed_clock, ids=counting_ids()) as orchestrator:
            yield orchestrator
    finally:
        await stores.aclose()


async def sdk_round(backend: str, folder: Path) -> tuple[float, float, Parts]:
    """The ten turns with the SDK's ``SQLiteSession``: wall and CPU seconds."""
    from agents import Agent, RunConfig, Runner, SQLiteSession
    from agents.testing.model import ScriptedModel

    from tests.integrations.test_openai_agents import check_calendar, script

    session = SQLiteSession("s", ":memory:" if backend == "memory" else folder / "sdk.db")
    agent = Agent(
        name="atlas",
        instructions="You help.",
        model=ScriptedModel(script()),
        tools=[check_calendar],
    )
    config = RunConfig(tracing_disabled=True)
    started, cpu = time.perf_counter(), time.process_time()
    for text in conv.INPUTS:
        await Runner.run(agent, text, session=session, run_config=config)
    timed = time.perf_counter() - started, time.process_time() - cpu
    session.close()
    return (*timed, {})


async def prefrontal_round(backend: str, folder: Path) -> tuple[float, float, Parts]:
    """The ten turns with ``PrefrontalSession``: wall and CPU seconds, and CPU by part."""
    from agents import Agent, Runner
    from agents.testing.model import ScriptedModel

    from tests.integrations.test_openai_agents import check_calendar, script

    clock = Clocked()
    async with orchestrator_on(backend, folder) as orchestrator:
        session = clocked_session(clock)(
            orchestrator, agent_id=conv.AGENT, user_id=conv.USER, session_id=conv.SESSION
        )
        agent = Agent(
            name="atlas",
            instructions=session.instructions,
            model=ScriptedModel(script()),
            tools=[check_calendar],
        )
        config = session.run_config(tracing_disabled=True)
        started, cpu = time.perf_counter(), time.process_time()
        for text in conv.INPUTS:
            await Runner.run(agent, text, session=session, run_config=config)
        wall, spent = time.perf_counter() - started, time.process_time() - cpu
    parts = dict(clock.parts)
    parts["sdk"] = spent - sum(parts.values())
    return wall, spent, parts


MODES = {
    "sdk_memory": ("memory", sdk_round),
    "prefrontal_memory": ("memory", prefrontal_round),
    "sdk_sqlite": ("sqlite", sdk_round),
    "prefrontal_sqlite": ("sqlite", prefrontal_round),
}


async def run(rounds: int) -> list[dict[str, Any]]:
    """Each mode's median per-turn times over ``rounds`` rounds, ratios to the SDK's session."""
    walls: dict[str, list[float]] = defaultdict(list)
    cpus: dict[str, list[float]] = defaultdict(list)
    parts: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    with tempfile.TemporaryDirectory() as scratch:
        for round_number in range(rounds + 1):  # round 0 untimed: imports, caches
            for name, (backend, mode) in MODES.items():
                folder = Path(scratch) / f"{name}-{round_number}"
                folder.mkdir()
                wall, cpu, split = await mode(backend, folder)
                if round_number:
                    walls[name].append(wall)
                    cpus[name].append(cpu)
                    for part, seconds in split.items():
                        parts[name][part].append(seconds)
    turns = len(conv.INPUTS)

    def per_turn(seconds: list[float]) -> float:
        return statistics.median(seconds) / turns * 1_000

    rows = []
    for name, (backend, _) in MODES.items():
        row: dict[str, Any] = {
            "mode": name,
            "cpu_per_turn_ms": round(per_turn(cpus[name]), 3),
            "per_turn_ms": round(per_turn(walls[name]), 3),
        }
        if name.startswith("prefrontal"):
            base = f"sdk_{backend}"
            row["cpu_ratio"] = round(per_turn(cpus[name]) / per_turn(cpus[base]), 2)
            row["ratio"] = round(per_turn(walls[name]) / per_turn(walls[base]), 2)
            row["parts_ms"] = {p: round(per_turn(s), 3) for p, s in parts[name].items()}
        row.update(rounds=rounds, turns=turns)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    for row in anyio.run(run, args.rounds):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
