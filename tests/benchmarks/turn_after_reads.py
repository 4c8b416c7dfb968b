"""The turn after its reads: CPU of each assembly phase, of ``end_turn``, and the garbage collector's.

    python -m tests.benchmarks.turn_after_reads                          # this checkout
    python -m tests.benchmarks.turn_after_reads --against /tmp/old/src   # and another, same run

Runs the growing conversation of :mod:`tests.benchmarks.growing_turn` in
memory (``--turns`` turns over ``--sessions`` sessions) in a child process
per checkout, the two alternating ``--rounds`` times, and measures in each
turn, on the thread's CPU clock:

- each assembly phase (``budget_allocation``, ``context_assembly``,
  ``working_memory_init``, ``finalize``): they run one after another in one
  task, on what the reads brought, so the time around each is its own;
- the end (``end_turn`` and its background writes, awaited);
- the garbage collector: every collection's time, from
  :data:`gc.callbacks`, and how many collections of each generation ran.

It prints one JSON line: per checkout the p50 of each phase and of the end
(ms), the collector's mean ms a turn and collections a turn per generation;
with ``--against`` the ratios old/new. Figures are reported, never asserted.
(:mod:`tests.benchmarks.gc_cost` gives the collector's cost of the fresh-store demo turn.)
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from pathlib import Path
from typing import Any

from tests.benchmarks import child

AFTER_READS = ("budget_allocation", "context_assembly", "working_memory_init", "finalize")


class Collector:
    """Times every collection of the garbage collector (:data:`gc.callbacks`) while installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.runs = [0, 0, 0]
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.thread_time()
            return
        self.seconds += time.thread_time() - self._began
        self.runs[info["generation"]] += 1

    def reading(self) -> tuple[float, list[int]]:
        """Seconds spent and collections per generation so far."""
        return self.seconds, list(self.runs)


def child_main(turns: int, sessions: int) -> None:
    """The child: run the conversation with each assembly phase timed; print one record a turn."""
    import anyio

    from prefrontal.orchestrator import runner
    from tests.benchmarks import growing_turn

    phases: dict[str, float] = {}
    original = runner._run_recorded

    async def timed(phase: Any, turn: Any) -> None:
        began = time.thread_time()
        try:
            await original(phase, turn)
        finally:
            phases[phase.name] = (time.thread_time() - began) * 1e3

    runner._run_recorded = timed
    collector = Collector()
    gc.callbacks.append(collector)
    records: list[dict[str, Any]] = []
    orchestrator_end = _wrap_end(records, phases, collector)
    try:
        anyio.run(growing_turn.conversation, "memory", turns, sessions)
    finally:
        gc.callbacks.remove(collector)
        orchestrator_end()
    print(json.dumps(records))


def _wrap_end(records: list[dict[str, Any]], phases: dict[str, float], collector: Collector) -> Any:
    """Time ``Orchestrator.end_turn`` and ``wait_background`` together, as a turn's end; at each
    ``wait_background`` append the turn's record. Returns what puts the methods back."""
    from prefrontal import Orchestrator

    end_turn, wait_background = Orchestrator.end_turn, Orchestrator.wait_background
    ending: dict[str, float] = {}
    last: dict[str, Any] = {"seconds": 0.0, "runs": [0, 0, 0]}

    async def end(self: Any, *arguments: Any, **options: Any) -> Any:
        ending["began"] = time.thread_time()
        return await end_turn(self, *arguments, **options)

    async def wait(self: Any) -> None:
        await wait_background(self)
        seconds, runs = collector.reading()
        records.append(
            {
                **{name: phases.get(name, 0.0) for name in AFTER_READS},
                "end": (time.thread_time() - ending.get("began", time.thread_time())) * 1e3,
                "gc_ms": (seconds - last["seconds"]) * 1e3,
                "gc_runs": [a - b for a, b in zip(runs, last["runs"], strict=True)],
            }
        )
        last.update(seconds=seconds, runs=runs)
        phases.clear()

    Orchestrator.end_turn = end  # type: ignore[method-assign]
    Orchestrator.wait_background = wait  # type: ignore[method-assign]

    def restore() -> None:
        Orchestrator.end_turn = end_turn  # type: ignore[method-assign]
        Orchestrator.wait_background = wait_background  # type: ignore[method-assign]

    return restore


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """p50 ms of each assembly phase and of the end; the collector's mean ms and runs a turn."""
    figures: dict[str, Any] = {
        f"{key}_p50_ms": round(statistics.median(r[key] for r in records), 3)
        for key in (*AFTER_READS, "end")
    }
    figures["after_reads_p50_ms"] = round(
        statistics.median(sum(r[key] for key in AFTER_READS) for r in records), 3
    )
    figures["gc_mean_ms"] = round(statistics.fmean(r["gc_ms"] for r in records), 3)
    figures["gc_runs_per_turn"] = [
        round(sum(r["gc_runs"][g] for r in records) / len(records), 3) for g in range(3)
    ]
    return figures


def run(
    *, turns: int, sessions: int, rounds: int, against: Path | None
) -> dict[str, dict[str, Any]]:
    """The figures of each checkout (this one ``new``, ``--against`` ``old``), and their ratios."""
    sources: dict[str, Path | None] = {"new": child.ROOT / "src"}
    if against is not None:
        sources["old"] = against
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
    for round_number in range(rounds):
        order = list(sources.items())
        for name, source in order if round_number % 2 == 0 else reversed(order):
            found[name].extend(
                child.module("tests.benchmarks.turn_after_reads", source, str(turns), str(sessions))
            )
    figures: dict[str, Any] = {name: summary(records) for name, records in found.items()}
    if against is not None:
        figures["ratio_old_new"] = {
            key: round(figures["old"][key] / figures["new"][key], 2)
            for key, value in figures["new"].items()
            if isinstance(value, float) and value > 0
        }
    return figures


def main(argv: list[str] | None = None) -> None:
    """Parse the options; run as the parent (figures) or as a ``--child`` (records)."""
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.turn_after_reads")
    parser.add_argument("--child", nargs=2, metavar=("TURNS", "SESSIONS"))
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--against", type=Path, default=None, help="an older checkout's src")
    options = parser.parse_args(argv)
    if options.child:
        child_main(int(options.child[0]), int(options.child[1]))
        return
    figures = run(
        turns=options.turns,
        sessions=options.sessions,
        rounds=options.rounds,
        against=options.against,
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
