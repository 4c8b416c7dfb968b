"""One in-memory demo turn, timed: p50 for a new session and a continuing one, models per turn.

    python -m tests.benchmarks.turn_speed                       # this checkout
    python -m tests.benchmarks.turn_speed --against /tmp/base   # and another checkout, same run

Each figure is measured in a subprocess of its own on freshly seeded
in-memory stores (the demo agent's data, a fixed clock): ``--turns`` turns
after ``--warmup``, each timed alone, in wall time (``p50_ms``, ``p90_ms``)
and in the CPU time of the thread that runs it (``cpu_p50_ms``: on a shared
machine the steadier figure, as it leaves out the time other processes
hold the core). *new* starts a new session every turn;
*continuing* runs every turn in one session. *models* counts the pydantic
models validated per turn (``BaseModel.__init__``, ``model_validate`` and
``model_validate_json`` calls) and *cancel scopes* the anyio cancel scopes
entered per turn, both over separate turns so that the counting does not
slow the timed ones. With ``--against DIR`` the same
measurements run on the checkout in ``DIR`` (its ``src`` first on the path),
alternating with this one ``--rounds`` times, and the ratios of the medians
are printed: times compared in one run, on one machine. With ``--gc
THRESHOLD`` the collector's first-generation threshold is set before timing
(as ``prefrontal.tune_gc`` does).

With ``--entered`` the orchestrator is entered (``async with``, as a
server runs it), so a turn's writes (its trace, the session's buffer, the
recall counts) run behind it where the code does that: ``p50_ms`` is then
the time a caller waits for its context. Each turn's writes are waited for
after it is timed, outside the timing, so that they do not run inside the
next turn's; ``cpu_with_writes_p50_ms`` is the CPU time of the turn and its
writes together (without ``--entered`` the writes run in ``start_turn``, and
it equals ``cpu_p50_ms``, give or take the wait's own cost). *models* counts
the models validated; the buffer also assembles some from checked values
(``prefrontal.trusted``), which are not counted. Prints JSON; it
measures and never fails on a figure.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio._backends._asyncio import CancelScope
from pydantic import BaseModel

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.demo import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed
from tests.conftest import fixed_clock

KINDS = ("new", "continuing")


def request(session: str) -> TurnRequest:
    return TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=session, user_input=SAMPLE_INPUT
    )


@contextmanager
def counting_scopes() -> Iterator[list[int]]:
    """Count the anyio cancel scopes entered inside the block (the count is ``box[0]``)."""
    box = [0]
    enter = CancelScope.__enter__

    def counted(self: CancelScope) -> CancelScope:
        box[0] += 1
        return enter(self)

    CancelScope.__enter__ = counted  # type: ignore[method-assign,assignment]
    try:
        yield box
    finally:
        CancelScope.__enter__ = enter  # type: ignore[method-assign]


@contextmanager
def counting_models() -> Iterator[list[int]]:
    """Count the pydantic models validated inside the block (the count is ``box[0]``)."""
    box = [0]
    init = BaseModel.__init__
    validate = BaseModel.model_validate.__func__  # type: ignore[attr-defined]
    validate_json = BaseModel.model_validate_json.__func__  # type: ignore[attr-defined]

    def counted_init(self: BaseModel, /, **data: Any) -> None:
        box[0] += 1
        init(self, **data)

    def counted(function: Callable[..., Any]) -> classmethod[Any, Any, Any]:
        def wrapper(cls: type[BaseModel], *args: Any, **kwargs: Any) -> Any:
            box[0] += 1
            return function(cls, *args, **kwargs)

        return classmethod(wrapper)

    BaseModel.__init__ = counted_init  # type: ignore[method-assign]
    BaseModel.model_validate = counted(validate)  # type: ignore[method-assign,assignment]
    BaseModel.model_validate_json = counted(validate_json)  # type: ignore[method-assign,assignment]
    try:
        yield box
    finally:
        BaseModel.__init__ = init  # type: ignore[method-assign]
        BaseModel.model_validate = classmethod(validate)  # type: ignore[method-assign,assignment]
        BaseModel.model_validate_json = classmethod(validate_json)  # type: ignore[method-assign,assignment]


async def measure(kind: str, turns: int, warmup: int, entered: bool) -> dict[str, float]:
    """p50 and p90 of ``turns`` timed turns of ``kind``, and the models validated per turn.

    ``entered``: the orchestrator is entered, so a turn's writes run behind
    it; each turn's are waited for after its timing, so that they do not
    land in the next turn's, and ``cpu_with_writes_p50_ms`` counts them.
    """
    stores = Stores.in_memory()
    await seed(stores)
    orchestrator = Orchestrator(stores, clock=fixed_clock)
    counter = iter(range(10**9))

    def session() -> str:
        return f"bench-{next(counter)}" if kind == "new" else DEMO_SESSION

    async with contextlib.AsyncExitStack() as stack:
        if entered:
            await stack.enter_async_context(orchestrator)
        for _ in range(warmup):
            await orchestrator.start_turn(request(session()))
            await orchestrator.wait_background()
        times, cpu, cpu_with_writes = [], [], []
        for _ in range(turns):
            started, started_cpu = time.perf_counter(), time.thread_time()
            result = await orchestrator.start_turn(request(session()))
            times.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - started_cpu)
            await orchestrator.wait_background()
            cpu_with_writes.append(time.thread_time() - started_cpu)
            assert result.ready_for_router
        counted = 20
        with counting_models() as box, counting_scopes() as scopes:
            for _ in range(counted):
                await orchestrator.start_turn(request(session()))
                await orchestrator.wait_background()
    cuts = statistics.quantiles(times, n=10)
    return {
        "p50_ms": round(statistics.median(times) * 1e3, 3),
        "p90_ms": round(cuts[8] * 1e3, 3),
        "cpu_p50_ms": round(statistics.median(cpu) * 1e3, 3),
        "cpu_with_writes_p50_ms": round(statistics.median(cpu_with_writes) * 1e3, 3),
        "models_per_turn": box[0] / counted,
        "cancel_scopes_per_turn": scopes[0] / counted,
    }


def one(
    kind: str, turns: int, warmup: int, threshold: int | None, entered: bool
) -> dict[str, float]:
    if threshold is not None:
        gc.set_threshold(threshold, *gc.get_threshold()[1:])
    gc.collect()
    return anyio.run(measure, kind, turns, warmup, entered)


def in_subprocess(src: Path | None, kind: str, args: argparse.Namespace) -> dict[str, float]:
    """One measurement in a fresh interpreter (``src`` first on its path, when given)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
    command = [
        sys.executable,
        "-m",
        "tests.benchmarks.turn_speed",
        "--one",
        kind,
        "--turns",
        str(args.turns),
        "--warmup",
        str(args.warmup),
    ]
    if args.gc is not None:
        command += ["--gc", str(args.gc)]
    if args.entered:
        command.append("--entered")
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return dict(json.loads(out.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --against")
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument("--gc", type=int, help="first-generation GC threshold while timing")
    parser.add_argument(
        "--entered", action="store_true", help="enter the orchestrator: writes behind the turn"
    )
    parser.add_argument("--one", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.turns, args.warmup, args.gc, args.entered)))
        return
    checkouts: dict[str, Path | None] = {"this": None}
    if args.against is not None:
        checkouts["against"] = args.against.resolve() / "src"
    runs: dict[str, dict[str, list[dict[str, float]]]] = {
        name: {kind: [] for kind in KINDS} for name in checkouts
    }
    for _ in range(args.rounds if args.against else 1):
        for kind in KINDS:
            for name, src in checkouts.items():
                runs[name][kind].append(in_subprocess(src, kind, args))
    report: dict[str, Any] = {}
    for name, kinds in runs.items():
        report[name] = {
            kind: {
                "p50_ms": statistics.median(r["p50_ms"] for r in found),
                "p90_ms": statistics.median(r["p90_ms"] for r in found),
                "cpu_p50_ms": statistics.median(r["cpu_p50_ms"] for r in found),
                "cpu_with_writes_p50_ms": statistics.median(
                    r["cpu_with_writes_p50_ms"] for r in found
                ),
                "models_per_turn": found[-1]["models_per_turn"],
                "cancel_scopes_per_turn": found[-1]["cancel_scopes_per_turn"],
            }
            for kind, found in kinds.items()
        }
    if args.against is not None:
        report["speedup"] = {
            f"{kind} {figure}": round(
                report["against"][kind][figure] / report["this"][kind][figure], 2
            )
            for kind in KINDS
            for figure in ("p50_ms", "cpu_p50_ms", "cpu_with_writes_p50_ms")
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
