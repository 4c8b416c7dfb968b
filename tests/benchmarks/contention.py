"""Working-memory saves under contention: several processes, or many turns, on one session.

    python -m tests.benchmarks.contention --backend sqlite --processes 2 --seconds 60
    python -m tests.benchmarks.contention --backend sqlite --processes 4 --seconds 60
    python -m tests.benchmarks.contention --backend postgres --processes 4 --seconds 60
    python -m tests.benchmarks.contention --backend sqlite --processes 1 --concurrency 8

Seeds the demo agent into a fresh SQLite file (or a PostgreSQL database of a
throwaway server, ``tests/postgres_server.py``), then starts ``--processes``
worker processes (real subprocesses), each with its own orchestrator (entered,
so the buffer is saved behind each turn) running ``--concurrency`` turns at a
time, every one of them on the **same session**, for ``--seconds``. Then it
reads the session's buffer back and counts:

- ``acknowledged``: turns that returned to their caller;
- ``lost_by_version``: acknowledged turns whose buffer save is not in the
  final state (each save adds exactly one to the session's version);
- ``lost_by_counters``: recall-gate decisions the turns' traces report
  (phases 5 and 6) missing from the counters in the final buffer;
- ``merged``: saves that lost a race and merged the turn's changes into the
  newer state; ``failed``: writes that failed (logged); ``degraded``: turns
  whose context was degraded;
- turn latency p50 and p99 (``start_turn`` as the caller sees it; the save
  runs behind it).

Prints one JSON object. Not a test: it measures and never fails on a figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

import prefrontal.logging
from prefrontal import (
    AdmissionConfig,
    Orchestrator,
    OrchestratorConfig,
    Stores,
    TurnRequest,
    TurnResult,
)
from prefrontal.buffer.state_document import decode
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.stores import postgres, sqlite
from prefrontal.stores.working_memory import SessionKey
from prefrontal.traces.models import PhaseStatus, TurnStatus
from tests.conftest import fixed_clock

SESSION = "contended"
QUESTIONS = (
    "Can we still make the December 3 launch if the payment provider review slips?",
    "What is blocking the payments migration?",
    "Summarise my open goals for this week.",
)


def open_stores(backend: str, target: str) -> Stores:
    """The stores of ``backend`` at ``target`` (a file path, or a DSN)."""
    return (
        sqlite.open_stores(target)
        if backend == "sqlite"
        else postgres.open_stores(target, max_size=8)
    )


def gate_decisions(result: TurnResult) -> int:
    """The recall-gate decisions a turn made (phases 5 and 6; none in a phase cut before it)."""
    return sum(
        1
        for p in result.trace.phases
        if p.name in ("episodic", "semantic")
        and p.detail.get("recall_reason") not in (None, "gate_off")
    )


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


async def worker(
    backend: str, target: str, seconds: float, concurrency: int, number: int
) -> dict[str, Any]:
    """Run turns on the shared session for ``seconds``; what this process saw."""
    latencies: list[float] = []
    decisions: list[int] = []
    not_ok: Counter[str] = Counter()
    degraded = 0
    config = OrchestratorConfig(
        deadline_ms=5_000, admission=AdmissionConfig(max_turns_in_flight=None)
    )
    stop = time.perf_counter() + seconds
    async with Orchestrator(open_stores(backend, target), config, clock=fixed_clock) as turns:

        async def loop(lane: int) -> None:
            nonlocal degraded
            n = 0
            while time.perf_counter() < stop:
                request = TurnRequest(
                    agent_id=DEMO_AGENT,
                    user_id=DEMO_USER,
                    session_id=SESSION,
                    user_input=QUESTIONS[(number + lane + n) % len(QUESTIONS)],
                )
                began = time.perf_counter()
                result = await turns.start_turn(request)
                latencies.append((time.perf_counter() - began) * 1_000)
                degraded += result.trace.status is TurnStatus.DEGRADED
                decisions.append(gate_decisions(result))
                not_ok.update(p.name for p in result.trace.phases if p.status is not PhaseStatus.OK)
                n += 1

        async with anyio.create_task_group() as group:
            for lane in range(concurrency):
                group.start_soon(loop, lane)
        await turns.wait_background()
        stats = turns.write_stats
    return {
        "acknowledged": len(latencies),
        "latencies_ms": latencies,
        "degraded": degraded,
        "phases_not_ok": dict(not_ok),
        "decisions": sum(decisions),
        "written": stats.written,
        "failed": stats.failed,
        "merged": stats.merged,
    }


@contextlib.contextmanager
def database(backend: str) -> Iterator[str]:
    """A fresh, empty database of ``backend``: its path or DSN."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            yield str(Path(directory) / "contention.db")
        return
    from tests.postgres_server import running_server

    with running_server() as server:
        yield server.create_database("contention")


async def prepare(backend: str, target: str) -> None:
    """Seed the demo agent (and create the schema)."""
    stores = open_stores(backend, target)
    try:
        await seed(stores)
    finally:
        await stores.aclose()


async def final_state(backend: str, target: str) -> tuple[int, int]:
    """The session's version and the recall decisions its buffer counted."""
    stores = open_stores(backend, target)
    try:
        key = SessionKey(agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=SESSION)
        state = await stores.working_memory.load(key)
    finally:
        await stores.aclose()
    if state is None:
        return 0, 0
    recall = decode(state.state).recall
    return state.version, recall.searches + recall.saved


def run(backend: str, processes: int, concurrency: int, seconds: float) -> dict[str, Any]:
    """The whole benchmark: seed, run the workers at once, read the session back."""
    with database(backend) as target:
        anyio.run(prepare, backend, target)
        command = [sys.executable, "-m", "tests.benchmarks.contention", "--worker"]
        args = ["--backend", backend, "--target", target, "--seconds", str(seconds)]
        args += ["--concurrency", str(concurrency)]
        began = time.perf_counter()
        children = [
            subprocess.Popen(
                [*command, *args, "--number", str(n)], stdout=subprocess.PIPE, text=True
            )
            for n in range(processes)
        ]
        reports = [json.loads(child.communicate()[0]) for child in children]
        wall = time.perf_counter() - began
        version, decisions = anyio.run(final_state, backend, target)
    acknowledged = sum(r["acknowledged"] for r in reports)
    latencies = [x for r in reports for x in r["latencies_ms"]]
    return {
        "backend": backend,
        "processes": processes,
        "concurrency": concurrency,
        "seconds": seconds,
        "wall_s": round(wall, 1),
        "acknowledged": acknowledged,
        "lost_by_version": acknowledged - version,
        "lost_by_counters": sum(r["decisions"] for r in reports) - decisions,
        "merged": sum(r["merged"] for r in reports),
        "failed": sum(r["failed"] for r in reports),
        "degraded": sum(r["degraded"] for r in reports),
        "phases_not_ok": dict(sum((Counter(r["phases_not_ok"]) for r in reports), Counter())),
        "turns_per_s": round(acknowledged / seconds, 1),
        "p50_ms": round(statistics.median(latencies), 1) if latencies else 0.0,
        "p99_ms": round(percentile(latencies, 0.99), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Working-memory saves under contention.")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=1, help="turns at once per process")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    parser.add_argument("--number", type=int, default=0, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        prefrontal.logging.configure(json=True, level="warning", stream=sys.stderr)
        report = anyio.run(
            worker,
            options.backend,
            options.target,
            options.seconds,
            options.concurrency,
            options.number,
        )
        print(json.dumps(report))
        return
    print(json.dumps(run(options.backend, options.processes, options.concurrency, options.seconds)))


if __name__ == "__main__":
    main()
