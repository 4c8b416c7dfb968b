"""Open-loop load on the HTTP API: the rate one and two server processes hold within the deadline.

    python -m tests.benchmarks.open_loop                          # SQLite, 1 and 2 workers
    python -m tests.benchmarks.open_loop --backend postgres --workers 1 2
    python -m tests.benchmarks.open_loop --hold 15 --start 4      # shorter steps

As wrk2 and vegeta do, turns arrive at a constant rate whatever the server
answers (each arrival starts a turn, ``POST /v1/turns``, and ends it,
``POST /v1/turns/{id}/end``), and a turn's latency runs from the moment it
was due, so a server that falls behind is charged for the wait (no
coordinated omission). For each backend and worker count it starts
``prefrontal serve http --workers N`` on 127.0.0.1 (SQLite: a fresh file
with the demo data; PostgreSQL: a fresh database of the throwaway server
the tests use, with the demo data), then, after ``--warmup`` seconds at ``--start`` that are not counted (every
worker process opens its connections and fills its caches), raises the rate
from ``--start``
turns per second by ``--step`` while a rate is *held*: ``--hold`` seconds
with no error, no degraded turn, every turn started and ended, and the p99
of starting a turn within the deadline (``--deadline-ms``). The capacity is
the highest rate held; the server is then run at ``--load`` (80%) of it for
``--hold`` seconds and the p50, p99 and max are reported. The load
generator's own CPU (user + system seconds per wall second, of this
process) is printed beside every step: on a shared machine it competes with
the server. Prints one JSON object per step and a summary. Not a test: it
measures and never fails on a figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx

from prefrontal.demo import DEMO_USER, SAMPLE_INPUT
from tests.servers.conftest import seeded
from tests.servers.harness import AGENT_KEY, http_server
from tests.servers.test_http_postgres import seeded_postgres

QUESTIONS = (
    SAMPLE_INPUT,
    "What is blocking the payments migration?",
    "Let's plan the Lisbon offsite agenda.",
    "Summarise my open goals for this week.",
)
SESSIONS = 64


@dataclass
class Step:
    """What one rate did: every arrival's outcome."""

    rate: float
    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    started: int = 0
    ended: int = 0
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    degraded: int = 0
    cpu_s: float = 0.0
    wall_s: float = 0.0

    def held(self, deadline_ms: float) -> bool:
        """0 errors, 0 degraded, every turn started and ended, p99 within the deadline."""
        due = round(self.rate * self.seconds)
        return (
            self.errors == 0
            and self.degraded == 0
            and self.started == self.ended == due
            and self.p(0.99) <= deadline_ms
        )

    def failed(self, kind: str) -> None:
        """Count one error of ``kind`` (a status, or a transport error's type)."""
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1

    def p(self, q: float) -> float:
        """The ``q`` quantile of the start latencies (ms)."""
        if not self.latencies_ms:
            return float("inf")
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def report(self, deadline_ms: float) -> dict[str, Any]:
        """The step as printed."""
        return {
            "rate_per_s": round(self.rate, 2),
            "seconds": self.seconds,
            "started": self.started,
            "ended": self.ended,
            "errors": self.errors,
            "error_kinds": self.error_kinds,
            "degraded": self.degraded,
            "p50_ms": round(self.p(0.5), 1),
            "p99_ms": round(self.p(0.99), 1),
            "max_ms": round(max(self.latencies_ms, default=float("inf")), 1),
            "mean_ms": round(statistics.fmean(self.latencies_ms), 1) if self.latencies_ms else None,
            "held": self.held(deadline_ms),
            "generator_cpu_per_s": round(self.cpu_s / self.wall_s, 3) if self.wall_s else None,
        }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _one(client: httpx.AsyncClient, step: Step, index: int, due: float) -> None:
    body = {
        "user_id": DEMO_USER,
        "session_id": f"open-{index % SESSIONS}",
        "user_input": QUESTIONS[index % len(QUESTIONS)],
    }
    try:
        started = await client.post("/v1/turns", json=body)
        step.latencies_ms.append((time.perf_counter() - due) * 1_000)
        if started.status_code != 200:
            step.failed(f"start {started.status_code}")
            return
        step.started += 1
        turn = started.json()
        if turn["status"] != "ok":
            step.degraded += 1
        ended = await client.post(
            f"/v1/turns/{turn['turn_id']}/end",
            json={"user_id": DEMO_USER, "reply": "Noted; the launch review is on Thursday."},
        )
        if ended.status_code == 200:
            step.ended += 1
        else:
            step.failed(f"end {ended.status_code}")
    except httpx.HTTPError as error:
        step.failed(type(error).__name__)


async def run_rate(base: str, rate: float, seconds: float) -> Step:
    """Turns arriving at ``rate`` per second for ``seconds``; each one started and ended."""
    step = Step(rate=rate, seconds=seconds)
    limits = httpx.Limits(max_connections=2_000, max_keepalive_connections=2_000)
    headers = {"Authorization": f"Bearer {AGENT_KEY}"}
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=60, limits=limits
    ) as client:
        cpu, wall = _cpu(), time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in range(round(rate * seconds)):
                due = wall + index / rate
                delay = due - time.perf_counter()
                if delay > 0:
                    await anyio.sleep(delay)
                group.start_soon(_one, client, step, index, due)
        step.cpu_s, step.wall_s = _cpu() - cpu, time.perf_counter() - wall
    return step


def capacity(base: str, args: argparse.Namespace, label: dict[str, Any]) -> dict[str, Any]:
    """The highest rate held, then the run at ``--load`` of it."""
    rate, best = args.start, 0.0
    if args.warmup:
        anyio.run(run_rate, base, args.start, args.warmup)
    while rate <= args.max_rate:
        step = anyio.run(run_rate, base, rate, args.hold)
        print(json.dumps(label | {"phase": "search"} | step.report(args.deadline_ms)), flush=True)
        if not step.held(args.deadline_ms):
            break
        best, rate = rate, rate * args.step
    summary: dict[str, Any] = label | {"capacity_per_s": round(best, 2), "hold_s": args.hold}
    if best:
        loaded = anyio.run(run_rate, base, best * args.load, args.hold)
        summary["at_load"] = loaded.report(args.deadline_ms) | {"share": args.load}
    print(json.dumps(summary | {"phase": "summary"}), flush=True)
    return summary


@contextlib.contextmanager
def database(backend: str) -> Iterator[str]:
    """A fresh database with the demo data: a SQLite file, or a PostgreSQL database."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="prefrontal-open-loop-") as tmp:
            path = Path(tmp) / "server.db"
            anyio.run(seeded, path)
            yield str(path)
        return
    from tests.postgres_server import running_server

    with running_server() as server:
        dsn = server.create_database("open_loop")
        anyio.run(seeded_postgres, dsn)
        yield dsn


def main(argv: list[str] | None = None) -> None:
    """Measure the capacities the module describes and print them as JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--hold", type=float, default=60.0, help="Seconds each rate is held.")
    parser.add_argument("--start", type=float, default=4.0, help="First rate (turns/s).")
    parser.add_argument("--step", type=float, default=1.25, help="Rate multiplier per step.")
    parser.add_argument("--max-rate", type=float, default=500.0)
    parser.add_argument(
        "--warmup", type=float, default=10.0, help="Seconds at --start first, not counted."
    )
    parser.add_argument("--load", type=float, default=0.8, help="Share of capacity to run at.")
    parser.add_argument("--deadline-ms", type=float, default=1_000.0)
    args = parser.parse_args(argv)
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    results = []
    for backend in backends:
        for workers in args.workers:
            with database(backend) as db:
                options = ("--deadline-ms", str(args.deadline_ms), "--workers", str(workers))
                with http_server(db, *options, test_clock=False) as (base, _):
                    time.sleep(2.0)  # the other workers finish starting
                    label = {"backend": backend, "workers": workers}
                    results.append(capacity(base, args, label))
    by = {(r["backend"], r["workers"]): r["capacity_per_s"] for r in results}
    for backend in backends:
        one, two = by.get((backend, 1)), by.get((backend, 2))
        if one and two:
            print(json.dumps({"backend": backend, "two_over_one": round(two / one, 2)}))


if __name__ == "__main__":
    main()
