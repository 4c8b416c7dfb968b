"""Memory over many sequential in-memory turns: RSS every 1,000 turns, and what grew.

    python -m tests.benchmarks.rss_turns --turns 20000
    python -m tests.benchmarks.rss_turns --turns 4000 --trace 2000   # where the growth is

Runs ``--turns`` turns one after another on in-memory stores seeded with the
demo agent (the in-memory trace store keeps ``--keep-traces`` traces, its
default 10,000: that is the retention). Sessions last ``--session-turns`` turns each, so the
working-memory store gains a session every so many turns, as a live process
would; the clock advances ``--step`` seconds a turn. Prints RSS (from
``/proc/self/statm``) after a collection, every ``--every`` turns, as JSON
lines, with the objects the collector tracks then and the p50 and mean of
those turns' times (the mean carries the collector's full passes, which
walk every object alive). With ``--trace N`` it traces allocations from the first turn (so what
the bounded stores and caches let go counts against what they add), takes
tracemalloc snapshots at turn ``N`` and at the end, and prints the 15 source
lines whose allocations grew most in between, and the object types
``gc.get_objects()`` counts more of. Not a test: it measures and never fails on a figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time
import tracemalloc
from collections import Counter
from datetime import UTC, datetime, timedelta

import anyio

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.demo import DEMO_AGENT, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.stores.memory import InMemoryTraceStore

START = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
QUESTIONS = (
    SAMPLE_INPUT,
    "What is blocking the payments migration?",
    "Let's plan the Lisbon offsite agenda.",
    "Summarise my open goals for this week.",
)


def rss_mb() -> float:
    """The resident set size of this process, in MB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def object_kinds() -> Counter[str]:
    """Objects the collector tracks, counted by type name."""
    return Counter(type(o).__qualname__ for o in gc.get_objects())


class SteppingClock:
    """A clock that moves ``step`` forward each time it is read by a turn."""

    def __init__(self, step: timedelta) -> None:
        self.now = START
        self.step = step

    def __call__(self) -> datetime:
        return self.now

    def tick(self) -> None:
        self.now += self.step


async def run(args: argparse.Namespace) -> None:
    stores = Stores.in_memory()
    stores = stores.replace(traces=InMemoryTraceStore(keep=args.keep_traces))
    await seed(stores)
    clock = SteppingClock(timedelta(seconds=args.step))
    orchestrator = Orchestrator(stores, clock=clock)
    started = time.perf_counter()
    before: tracemalloc.Snapshot | None = None
    kinds: Counter[str] = Counter()
    if args.trace:
        tracemalloc.start(8)
    times: list[float] = []
    for n in range(1, args.turns + 1):
        request = TurnRequest(
            agent_id=DEMO_AGENT,
            user_id=DEMO_USER,
            session_id=f"rss-{n // args.session_turns}",
            user_input=QUESTIONS[n % len(QUESTIONS)],
        )
        began = time.perf_counter()
        await orchestrator.start_turn(request)
        times.append(time.perf_counter() - began)
        clock.tick()
        if args.trace and n == args.trace:
            gc.collect()
            before = tracemalloc.take_snapshot()
            kinds = object_kinds()
        if n % args.every == 0:
            gc.collect()
            window = {
                "p50_ms": round(statistics.median(times) * 1e3, 3),
                "mean_ms": round(statistics.fmean(times) * 1e3, 3),
            }
            times.clear()
            alive = len(gc.get_objects())
            seconds = round(time.perf_counter() - started, 1)
            print(
                json.dumps(
                    {"turns": n, "s": seconds, "rss_mb": round(rss_mb(), 1), "objects": alive}
                    | window
                )
            )
    if before is not None:
        gc.collect()
        after = tracemalloc.take_snapshot()
        for stat in after.compare_to(before, "lineno")[:15]:
            print(stat)
        grown = object_kinds()
        grown.subtract(kinds)
        print(json.dumps({"objects_grown": [kv for kv in grown.most_common(10) if kv[1] > 0]}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--every", type=int, default=1_000)
    parser.add_argument("--session-turns", type=int, default=10)
    parser.add_argument("--step", type=float, default=30.0, help="seconds between turns")
    parser.add_argument("--keep-traces", type=int, default=10_000, help="the trace store's bound")
    parser.add_argument("--trace", type=int, default=0, help="turn of the first snapshot")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
