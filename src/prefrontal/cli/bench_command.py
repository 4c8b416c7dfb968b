"""``prefrontal bench``: the benchmark suite's headline figures, measured in a few seconds.

Three figures, as in ``make bench`` (``tests/benchmarks``), on the demo data:

- overhead: a whole turn on instant in-memory stores (median and p95);
- concurrency: wall time of the phase graph against the same phases run one
  after another, every store read delayed by its phase's time budget (the
  specification's latencies, scaled by ``--latency-scale``);
- load: many turns at once in one process with those latencies: p50, p99
  and turns per second. The orchestrator admits as many turns at once as
  its admission limit allows (as a server does); a turn refused with
  :class:`~prefrontal.errors.OverloadedError` waits the ``retry_after_s`` it
  is told and tries again, as a client should, and its time counts from
  its first try. How many tries were refused is reported.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict, dataclass

import anyio
import typer
from rich.console import Console
from rich.table import Table

from prefrontal.demo.seed import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.errors import OverloadedError
from prefrontal.orchestrator import Orchestrator
from prefrontal.phases import LOADING, PHASES
from prefrontal.stores.set import STORE_KINDS, Stores
from prefrontal.testing import DelayedStore
from prefrontal.turn import OrchestratorConfig, TurnRequest

READS = ("get_profile", "query", "recent", "get_summary", "search", "around", "active")
"""The loading calls of phases 2-7: the specification's latencies are theirs."""


@dataclass(frozen=True)
class BenchResult:
    """The figures ``prefrontal bench`` prints (milliseconds unless named otherwise)."""

    turns: int
    median_ms: float
    p95_ms: float
    latency_scale: float
    graph_ms: float
    sequential_ms: float
    concurrent: int
    p50_ms: float
    p99_ms: float
    turns_per_s: float
    refused: int = 0
    """Tries refused by the admission limit (then retried after the wait it named)."""

    @property
    def ratio(self) -> float:
        """Graph wall time over sequential wall time (lower is better)."""
        return self.graph_ms / self.sequential_ms if self.sequential_ms else 0.0


def _request(session: str = DEMO_SESSION) -> TurnRequest:
    return TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=session, user_input=SAMPLE_INPUT
    )


def _slowed(stores: Stores, scale: float) -> Stores:
    budgets = {p.name: p.budget_ms for p in PHASES}
    delays = {k: budgets[k] * scale / 1_000 for k in LOADING if k in STORE_KINDS}
    return stores.replace(
        **{k: DelayedStore(getattr(stores, k), s, methods=READS) for k, s in delays.items()}
    )


def _cut(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(int(len(ordered) * share), len(ordered) - 1)]


async def _times(orchestrator: Orchestrator, turns: int) -> list[float]:
    times = []
    for _ in range(turns):
        began = time.perf_counter()
        await orchestrator.start_turn(_request())
        times.append((time.perf_counter() - began) * 1_000)
    return times


async def _at_once(orchestrator: Orchestrator, turns: int) -> tuple[list[float], float, int]:
    """Each turn's time (from its first try), the wall time, and the tries refused."""
    times: list[float] = []
    refused = 0

    async def one(n: int) -> None:
        nonlocal refused
        began = time.perf_counter()
        while True:
            try:
                await orchestrator.start_turn(_request(session=f"bench-{n}"))
            except OverloadedError as error:
                refused += 1
                await anyio.sleep(error.retry_after_s)
                continue
            break
        times.append((time.perf_counter() - began) * 1_000)

    began = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for n in range(turns):
            tg.start_soon(one, n)
    return times, time.perf_counter() - began, refused


async def measure(turns: int, rounds: int, concurrent: int, scale: float) -> BenchResult:
    """Run the three measurements on freshly seeded in-memory stores."""
    stores = Stores.in_memory()
    await seed(stores)
    await _times(Orchestrator(stores), 3)  # warm the tokenizer's cache
    instant = await _times(Orchestrator(stores), turns)
    slow = _slowed(stores, scale)
    patient = OrchestratorConfig(deadline_ms=30_000)
    graph = await _times(Orchestrator(slow, patient), rounds)
    sequential_config = patient.model_copy(update={"concurrency": "sequential"})
    sequential = await _times(Orchestrator(slow, sequential_config), rounds)
    many, wall_s, refused = await _at_once(Orchestrator(slow, patient), concurrent)
    return BenchResult(
        turns=turns,
        median_ms=statistics.median(instant),
        p95_ms=_cut(instant, 0.95),
        latency_scale=scale,
        graph_ms=statistics.median(graph),
        sequential_ms=statistics.median(sequential),
        concurrent=concurrent,
        p50_ms=_cut(many, 0.50),
        p99_ms=_cut(many, 0.99),
        turns_per_s=concurrent / wall_s if wall_s else 0.0,
        refused=refused,
    )


def table(r: BenchResult) -> Table:
    """The headline figures, one per row."""
    out = Table(title="prefrontal bench: demo data, in process", title_justify="left")
    out.add_column("measure")
    out.add_column("value", justify="right")
    latencies = f"store latencies x{r.latency_scale:g}"
    rows = (
        (f"turn overhead, instant stores, median of {r.turns}", f"{r.median_ms:.2f} ms"),
        ("turn overhead, instant stores, p95", f"{r.p95_ms:.2f} ms"),
        (f"turn, {latencies}: graph", f"{r.graph_ms:.1f} ms"),
        (f"turn, {latencies}: sequential", f"{r.sequential_ms:.1f} ms"),
        ("graph / sequential wall time", f"{r.ratio:.2f}"),
        (f"{r.concurrent} turns at once: p50", f"{r.p50_ms:.1f} ms"),
        (f"{r.concurrent} turns at once: p99", f"{r.p99_ms:.1f} ms"),
        (f"{r.concurrent} turns at once: throughput", f"{r.turns_per_s:.0f} turns/s"),
        (f"{r.concurrent} turns at once: tries refused, then retried", f"{r.refused}"),
    )
    for measure_name, value in rows:
        out.add_row(measure_name, value)
    return out


def bench(
    turns: int = typer.Option(50, min=1, max=10_000, help="Turns on instant stores."),
    rounds: int = typer.Option(3, min=1, max=100, help="Slowed turns per mode."),
    concurrent: int = typer.Option(200, min=1, max=10_000, help="Turns at once."),
    latency_scale: float = typer.Option(
        1.0, min=0.0, max=10.0, help="Multiplies the specification's store latencies."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Measure turn overhead, the concurrency gain and many turns at once (a few seconds)."""
    result = anyio.run(measure, turns, rounds, concurrent, latency_scale)
    if as_json:
        typer.echo(json.dumps(asdict(result) | {"ratio": result.ratio}, indent=2))
    else:
        Console().print(table(result))
