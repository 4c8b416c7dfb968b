"""Sustained load: clients running turns back to back on slowed stores, good turns a second.

    python -m tests.benchmarks.sustained --clients 100 --seconds 8 --ceiling 32
    python -m tests.benchmarks.sustained --clients 1000 --seconds 8 --ceiling 128 --gc raised

``--clients`` clients each start a turn (a new session each), wait for it
and start the next, for ``--seconds``, against one entered orchestrator on
in-memory stores slowed to the specification's latencies
(:func:`tests.benchmarks.spec_latency.slowed`). Admission control is on,
adaptive, with ``--ceiling`` turns in flight at most (``none`` admits every
turn); a refused client waits 50 ms and tries again. Prints the turns a
second that were good (not degraded), degraded and refused, the p50 and
p99 of the turns that ran, and the limit in force at the end. ``--gc
raised`` sets the collector's thresholds to (50,000, 20, 20) first. Prints
JSON; it measures and never fails on a figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from typing import Any

import anyio

from prefrontal import Orchestrator, OrchestratorConfig, OverloadedError
from prefrontal.traces.models import TurnStatus
from tests.benchmarks.spec_latency import GC_RAISED, percentile, request, slowed
from tests.conftest import fixed_clock


async def sustain(clients: int, seconds: float, ceiling: int | None) -> dict[str, Any]:
    """Run ``clients`` closed-loop clients for ``seconds``; count what their turns became."""
    stores = await slowed()
    config = OrchestratorConfig.model_validate({"admission": {"max_turns_in_flight": ceiling}})
    good = degraded = refused = 0
    latencies: list[float] = []
    async with Orchestrator(stores, config, clock=fixed_clock) as orchestrator:
        end = time.perf_counter() + seconds

        async def client(number: int) -> None:
            nonlocal good, degraded, refused
            turn = 0
            while time.perf_counter() < end:
                turn += 1
                began = time.perf_counter()
                try:
                    result = await orchestrator.start_turn(request(f"c{number}-{turn}"))
                except OverloadedError:
                    refused += 1
                    await anyio.sleep(0.05)
                    continue
                latencies.append((time.perf_counter() - began) * 1_000)
                if result.trace.status is TurnStatus.DEGRADED:
                    degraded += 1
                else:
                    good += 1

        began = time.perf_counter()
        async with anyio.create_task_group() as group:
            for number in range(clients):
                group.start_soon(client, number)
        elapsed = time.perf_counter() - began
        limit = orchestrator.turns_in_flight_limit
    return {
        "clients": clients,
        "ceiling": ceiling,
        "good_per_s": round(good / elapsed, 1),
        "degraded_per_s": round(degraded / elapsed, 1),
        "refused": refused,
        "p50_ms": round(statistics.median(latencies), 1) if latencies else 0.0,
        "p99_ms": round(percentile(latencies, 0.99), 1),
        "limit_at_end": limit,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--ceiling", default="32", help="turns in flight at most, or 'none'")
    parser.add_argument("--gc", choices=("default", "raised"), default="default")
    args = parser.parse_args()
    if args.gc == "raised":
        gc.set_threshold(*GC_RAISED)
    ceiling = None if args.ceiling == "none" else int(args.ceiling)
    report = anyio.run(sustain, args.clients, args.seconds, ceiling)
    print(json.dumps({**report, "gc": args.gc}))


if __name__ == "__main__":
    main()
