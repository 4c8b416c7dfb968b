"""``prefrontal bench``: a quick in-process measurement of turns on the demo data.

Two headline figures: the orchestrator's own overhead (median turn time on
instant in-memory stores) and what running the phase graph concurrently
buys (wall time of ``sequential`` over ``graph`` with a simulated latency
on every store call). It takes a few seconds; the full suite is ``make bench``.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import anyio
import typer
from rich.console import Console
from rich.table import Table

from prefrontal.demo.seed import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.set import Stores
from prefrontal.testing import DelayedStore
from prefrontal.turn import OrchestratorConfig, TurnRequest

SLOWED = ("consciousness", "frontal_cortex", "conversation", "episodic", "semantic", "scratch_page")


@dataclass(frozen=True)
class BenchResult:
    """The figures ``prefrontal bench`` prints."""

    turns: int
    median_ms: float
    p95_ms: float
    latency_ms: float
    graph_ms: float
    sequential_ms: float

    @property
    def speedup(self) -> float:
        """Sequential wall time over concurrent wall time."""
        return self.sequential_ms / self.graph_ms if self.graph_ms else 0.0


def _request() -> TurnRequest:
    return TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=DEMO_SESSION, user_input=SAMPLE_INPUT
    )


async def _times(orchestrator: Orchestrator, turns: int) -> list[float]:
    request, times = _request(), []
    for _ in range(turns):
        began = time.perf_counter()
        await orchestrator.start_turn(request)
        times.append((time.perf_counter() - began) * 1_000)
    return times


def _slowed(stores: Stores, seconds: float) -> Stores:
    return stores.replace(**{k: DelayedStore(getattr(stores, k), seconds) for k in SLOWED})


def _p95(times: Sequence[float]) -> float:
    ordered = sorted(times)
    return ordered[min(int(len(ordered) * 0.95), len(ordered) - 1)]


async def measure(turns: int, latency_ms: float, rounds: int) -> BenchResult:
    """Run the measurement: ``turns`` instant turns, ``rounds`` slowed turns per mode."""
    stores = Stores.in_memory()
    await seed(stores)
    await _times(Orchestrator(stores), 2)  # warm the tokenizer's cache
    instant = await _times(Orchestrator(stores), turns)
    slow = _slowed(stores, latency_ms / 1_000)
    graph = await _times(Orchestrator(slow, OrchestratorConfig(concurrency="graph")), rounds)
    sequential = await _times(
        Orchestrator(slow, OrchestratorConfig(concurrency="sequential")), rounds
    )
    return BenchResult(
        turns=turns,
        median_ms=statistics.median(instant),
        p95_ms=_p95(instant),
        latency_ms=latency_ms,
        graph_ms=statistics.median(graph),
        sequential_ms=statistics.median(sequential),
    )


def table(result: BenchResult) -> Table:
    """The headline figures, one per row."""
    out = Table(title="prefrontal bench (demo data, in-process)", title_justify="left")
    out.add_column("measure")
    out.add_column("value", justify="right")
    out.add_row(f"turn, instant stores: median of {result.turns}", f"{result.median_ms:.2f} ms")
    out.add_row("turn, instant stores: p95", f"{result.p95_ms:.2f} ms")
    out.add_row(
        f"turn, {result.latency_ms:.0f} ms per store call: graph", f"{result.graph_ms:.1f} ms"
    )
    out.add_row(
        f"turn, {result.latency_ms:.0f} ms per store call: sequential",
        f"{result.sequential_ms:.1f} ms",
    )
    out.add_row("sequential / graph wall time", f"{result.speedup:.2f}x")
    return out


def bench(
    turns: int = typer.Option(50, min=1, max=10_000, help="Turns on instant stores."),
    latency_ms: float = typer.Option(20.0, min=0, max=500, help="Simulated store latency."),
    rounds: int = typer.Option(5, min=1, max=100, help="Slowed turns per mode."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Measure turn overhead and the concurrency speed-up on the demo data (a few seconds)."""
    result = anyio.run(measure, turns, latency_ms, rounds)
    if as_json:
        typer.echo(json.dumps(asdict(result) | {"speedup": result.speedup}, indent=2))
    else:
        Console().print(table(result))
