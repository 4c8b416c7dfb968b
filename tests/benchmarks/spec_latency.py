"""Turns with every store method at the specification's latency: wall time, degraded turns.

    python -m tests.benchmarks.spec_latency                   # both parts
    python -m tests.benchmarks.spec_latency --part wall --turns 20
    python -m tests.benchmarks.spec_latency --part many --concurrent 1000
    python -m tests.benchmarks.spec_latency --part many --only gc_raised   # one burst alone

Every method of every store (reads and writes) answers after the
specification's latency: consciousness, frontal cortex and conversation
100 ms, episodic and semantic 150, scratch page 50, working memory and
traces 20. In-memory stores with the demo data, the orchestrator entered
(so writes run behind the turn where the code does that).

- ``wall``: ``--turns`` turns one after another in graph mode, for a new
  session each time and for one continuing session (the writes of each turn
  waited for before the next): p50 and max wall time of ``start_turn``, and
  the turns degraded, with the phases that were not ``ok``.
- ``many``: ``--concurrent`` turns started at once, each in a session of
  its own, every turn admitted, with the default garbage-collector threshold
  and with a raised one (50,000, 20, 20); then, where the code has admission
  control, with its default limits: turns/s (of turns completed), p50 and
  p99, refused, degraded turns, those degraded by the phases that wrote
  before the turn ended in older code (phase 10 or 11 not ``ok``), and the
  phases most often not ``ok``, and the collections of each generation
  during the burst with the seconds they took.

The script runs on whichever prefrontal is importable, so the same script
compares two trees in one run::

    git worktree add /tmp/base ebb14de
    PYTHONPATH=/tmp/base/src python -m tests.benchmarks.spec_latency

Prints one JSON object. Not a test: it measures and never fails on a figure.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio

import prefrontal
from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest, TurnResult
from prefrontal.demo import DEMO_AGENT, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.testing import DelayedStore
from prefrontal.traces.models import PhaseStatus, TurnStatus
from tests.benchmarks.collections_timed import collections_timed
from tests.conftest import fixed_clock

SPEC_LATENCIES = {
    "consciousness": 0.100,
    "frontal_cortex": 0.100,
    "conversation": 0.100,
    "episodic": 0.150,
    "semantic": 0.150,
    "scratch_page": 0.050,
    "working_memory": 0.020,
    "traces": 0.020,
}
WRITING_PHASES = ("working_memory_init", "finalize")
GC_RAISED = (50_000, 20, 20)


def request(session: str) -> TurnRequest:
    return TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=session, user_input=SAMPLE_INPUT
    )


async def slowed() -> Stores:
    """The demo data in memory, every store method at its specification latency."""
    stores = Stores.in_memory()
    await seed(stores)
    return stores.replace(
        **{kind: DelayedStore(getattr(stores, kind), s) for kind, s in SPEC_LATENCIES.items()}
    )


HAS_ADMISSION = "admission" in OrchestratorConfig.model_fields


def config(*, admit_all: bool = True) -> OrchestratorConfig:
    """The default configuration; every turn admitted, where the code has admission control."""
    fields: dict[str, Any] = {}
    if HAS_ADMISSION and admit_all:
        fields["admission"] = {"max_turns_in_flight": None}
    return OrchestratorConfig.model_validate(fields)


def not_ok(result: TurnResult) -> list[str]:
    return [f"{p.name}:{p.status.value}" for p in result.trace.phases if p.status != PhaseStatus.OK]


def by_writes(result: TurnResult) -> bool:
    return any(p.name in WRITING_PHASES and p.status != PhaseStatus.OK for p in result.trace.phases)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else 0.0


async def wall(turns: int) -> dict[str, Any]:
    """Sequential turns: a new session each, then one continuing session."""
    report: dict[str, Any] = {}
    for mode in ("new", "continuing"):
        async with Orchestrator(await slowed(), config(), clock=fixed_clock) as orchestrator:
            if mode == "continuing":
                await orchestrator.start_turn(request("continuing"))
                await orchestrator.wait_background()
            times: list[float] = []
            degraded: Counter[str] = Counter()
            count = 0
            for n in range(turns):
                session = f"new-{n}" if mode == "new" else "continuing"
                began = time.perf_counter()
                result = await orchestrator.start_turn(request(session))
                times.append((time.perf_counter() - began) * 1_000)
                await orchestrator.wait_background()
                if result.trace.status is TurnStatus.DEGRADED:
                    count += 1
                    degraded.update(not_ok(result))
        report[mode] = {
            "p50_ms": round(statistics.median(times), 1),
            "max_ms": round(max(times), 1),
            "degraded": count,
            "phases_not_ok": dict(degraded),
        }
    return report


@contextlib.contextmanager
def threshold(value: tuple[int, int, int] | None) -> Iterator[None]:
    before = gc.get_threshold()
    if value is not None:
        gc.set_threshold(*value)
    try:
        yield
    finally:
        gc.set_threshold(*before)


async def burst(
    orchestrator: Orchestrator, concurrent: int
) -> tuple[list[float], list[TurnResult], float, int]:
    """``concurrent`` turns started at once, each in a session of its own (and how many refused)."""
    latencies: list[float] = []
    results: list[TurnResult] = []
    refused: list[float] = []

    async def one(n: int) -> None:
        began = time.perf_counter()
        try:
            results.append(await orchestrator.start_turn(request(f"s-{n}")))
        except prefrontal.PrefrontalError as error:
            if type(error).__name__ != "OverloadedError":
                raise
            refused.append((time.perf_counter() - began) * 1_000)
            return
        latencies.append((time.perf_counter() - began) * 1_000)

    began = time.perf_counter()
    async with anyio.create_task_group() as group:
        for n in range(concurrent):
            group.start_soon(one, n)
    return latencies, results, time.perf_counter() - began, len(refused)


RUNS = (
    ("gc_default", None, True),
    ("gc_raised", GC_RAISED, True),
    ("gc_raised_admission_default", GC_RAISED, False),
)


async def many(concurrent: int, only: str | None = None) -> dict[str, Any]:
    """``concurrent`` turns at once: default and raised GC thresholds; default admission.

    ``only`` names the one of :data:`RUNS` to make, in a process of its own.
    """
    report: dict[str, Any] = {}
    for name, value, admit_all in RUNS:
        if (not admit_all and not HAS_ADMISSION) or only not in (None, name):
            continue
        stores = await slowed()
        gc.collect()
        with threshold(value):
            async with Orchestrator(
                stores, config(admit_all=admit_all), clock=fixed_clock
            ) as orchestrator:
                with collections_timed() as collections:
                    latencies, results, elapsed, refused = await burst(orchestrator, concurrent)
                drained = time.perf_counter()
                await orchestrator.wait_background()
                drain_s = time.perf_counter() - drained
        phases: Counter[str] = Counter(x for r in results for x in not_ok(r))
        report[name] = {
            "turns_per_s": round(len(results) / elapsed, 1),
            "turns_per_s_writes_included": round(len(results) / (elapsed + drain_s), 1),
            "p50_ms": round(statistics.median(latencies), 1) if latencies else 0.0,
            "p99_ms": round(percentile(latencies, 0.99), 1),
            "completed": len(results),
            "refused": refused,
            "degraded": sum(r.trace.status is TurnStatus.DEGRADED for r in results),
            "degraded_by_writes": sum(by_writes(r) for r in results),
            "phases_not_ok": dict(phases.most_common(8)),
            "collector": {
                str(generation): {"collections": len(times), "seconds": round(sum(times), 3)}
                for generation, times in collections.items()
            },
        }
    return report


async def main_async(
    part: str, turns: int, concurrent: int, only: str | None = None
) -> dict[str, Any]:
    report: dict[str, Any] = {"prefrontal": prefrontal.__file__}
    if part in ("wall", "both"):
        report["wall"] = await wall(turns)
    if part in ("many", "both"):
        report["many"] = await many(concurrent, only)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description="Turns at the specification's store latencies.")
    parser.add_argument("--part", choices=("wall", "many", "both"), default="both")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--concurrent", type=int, default=1_000)
    parser.add_argument("--only", choices=[name for name, _, _ in RUNS], help="one burst alone")
    options = parser.parse_args()
    report = anyio.run(main_async, options.part, options.turns, options.concurrent, options.only)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
