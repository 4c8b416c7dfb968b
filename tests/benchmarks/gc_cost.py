"""What the garbage collector costs per demo turn, generation by generation.

    python -m tests.benchmarks.gc_cost --kind continuing
    python -m tests.benchmarks.gc_cost --kind new --turns 1000
    PYTHONPATH=/tmp/base/src python -m tests.benchmarks.gc_cost --kind new   # another checkout

Runs ``--warmup`` then ``--turns`` demo turns on freshly seeded in-memory
stores (a fixed clock), the orchestrator entered and each turn's writes
waited for, with the collector at its default thresholds. A ``gc``
callback times every collection. Prints, per generation, the collections
per turn, their mean duration and the time they cost per turn; the mean
time of a turn with its writes; and the objects the collector tracks at the
end. A full (generation 2) collection walks every tracked object, and how
often one runs grows with the objects that survive long enough to be moved
there: what a turn leaves alive in caches costs every later turn. Prints
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

from prefrontal import Orchestrator, Stores
from prefrontal.demo import DEMO_SESSION, seed
from tests.benchmarks.collections_timed import collections_timed
from tests.benchmarks.turn_speed import request
from tests.conftest import fixed_clock


async def measure(kind: str, turns: int, warmup: int) -> dict[str, Any]:
    """The collector's cost over ``turns`` turns of ``kind`` (``new`` or ``continuing``)."""
    stores = Stores.in_memory()
    await seed(stores)
    counter = iter(range(10**9))

    def session() -> str:
        return f"gc-{next(counter)}" if kind == "new" else DEMO_SESSION

    async with Orchestrator(stores, clock=fixed_clock) as orchestrator:
        for _ in range(warmup):
            await orchestrator.start_turn(request(session()))
            await orchestrator.wait_background()
        with collections_timed() as spent:
            started = time.perf_counter()
            for _ in range(turns):
                await orchestrator.start_turn(request(session()))
                await orchestrator.wait_background()
            elapsed = time.perf_counter() - started
    return {
        "kind": kind,
        "turns": turns,
        "generations": {
            str(generation): {
                "per_turn": round(len(times) / turns, 3),
                "mean_us": round(statistics.mean(times) * 1e6, 1) if times else 0.0,
                "us_per_turn": round(sum(times) / turns * 1e6, 1),
            }
            for generation, times in spent.items()
        },
        "turn_with_writes_mean_ms": round(elapsed / turns * 1e3, 3),
        "objects_tracked": len(gc.get_objects()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("new", "continuing"), default="continuing")
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=300)
    args = parser.parse_args()
    print(json.dumps(anyio.run(measure, args.kind, args.turns, args.warmup), indent=2))


if __name__ == "__main__":
    main()
