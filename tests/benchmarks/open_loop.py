"""Open-loop load on the HTTP API: the rate one and two server processes hold within the deadline.

    python -m tests.benchmarks.open_loop --backend both --workers 1 2   # the full protocol
    python -m tests.benchmarks.open_loop --backend sqlite --workers 1 --hold 20
    python -m tests.benchmarks.open_loop --backend both --against /tmp/old/src  # two checkouts
    python -m tests.benchmarks.open_loop --backend postgres --workers 1 --replica

As wrk2 and vegeta do, turns arrive at a constant rate whatever the server
answers (each arrival starts a turn, ``POST /v1/turns``, and ends it,
``POST /v1/turns/{id}/end``), and a turn's latency runs from the moment it
was due, so a server that falls behind is charged for the wait (no
coordinated omission). Each turn asks one of 4,096 synthetic questions
(:func:`prefrontal.testing.synthetic.questions`) in one of 64 sessions of the
demo user and ends with a synthetic reply, so memory grows as it would
with real traffic.

A rate is *held* when, for the whole step, no request failed, no turn was
degraded, every turn due was started and ended, and the p99 of starting a
turn (from the moment it was due) is within ``--deadline-ms``. The
*capacity* is the highest rate held for ``--hold`` seconds (60). For each
backend and worker count it is found in bounded time:

1. **bracket**: on one server, rates rising by ``--step`` times from
   ``--start``, ``--probe`` seconds each, until one is not held;
2. **confirm**: ``--hold``-second runs, each on a fresh server and a fresh
   copy of the seeded database (so a step does not inherit the turns of the
   last), bisecting (geometric mean) between the highest rate confirmed and
   the lowest that failed, at most ``--confirmations`` runs, stopping once
   the two are within ``--precision``;
3. **at load**: a ``--hold``-second run at ``--load`` (80%) of the capacity,
   fresh too, reporting the p50, p99 and max.

Every run is a fresh ``prefrontal serve http --workers N`` on 127.0.0.1
(SQLite: a copy of a file seeded with the demo data; PostgreSQL: a database
copied from a seeded template on the throwaway server the tests use), with
``--warmup`` seconds of load first, not counted. Besides the latencies, each
run reports the CPU seconds per turn of the server processes, of
PostgreSQL and of this load generator, and the generator's share of a
core: they all share the machine's cores, so ``cores / (their sum)`` is
the most turns a second the machine could run, whatever the server does.

``--against SRC`` measures another checkout (its ``src``) as well, in the
same run: for each backend and worker count, that checkout's capacity right
after this one's, each server run from its own ``src`` on a database seeded
by its own code; the table then gives this checkout's capacity as a
multiple of the other's. ``--replica`` (PostgreSQL) measures each worker
count twice: on the primary alone, then with a streaming replica of it
(``pg_basebackup``, :func:`tests.postgres_server.running_replica`) that the
server's memory searches go to (``PREFRONTAL_READ_DSNS``); the replica's
CPU is counted with PostgreSQL's, and the table gives the ratio of the two
capacities (this checkout only). Both servers share this machine's cores, so the ratio shows
what a replica costs or saves here, not what a second machine would add.

Prints one JSON object per run, then a table. Not a test: it measures and
never fails on a figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from prefrontal.demo import DEMO_USER
from prefrontal.testing.synthetic import questions, sentence
from tests.benchmarks import child
from tests.benchmarks.process_cpu import TreeCpu, own_cpu_s
from tests.postgres_server import Server
from tests.servers.harness import AGENT_KEY, http_server

QUESTIONS = tuple(questions(4_096, seed=36))
_REPLY_RNG = random.Random(36)
REPLIES = tuple(sentence(_REPLY_RNG) for _ in range(1_024))
SESSIONS = 64


@dataclass
class Step:
    """What one rate did: every arrival's outcome, and the CPU the processes used."""

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
    server_cpu_s: float | None = None
    postgres_cpu_s: float | None = None

    def held(self, deadline_ms: float) -> bool:
        """0 errors, 0 degraded, every turn started and ended, p99 within the deadline."""
        return (
            self.errors == 0
            and self.degraded == 0
            and self.started == self.ended == self.due
            and self.p(0.99) <= deadline_ms
        )

    @property
    def due(self) -> int:
        """Turns that arrived."""
        return round(self.rate * self.seconds)

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

    def per_turn_ms(self, seconds: float | None) -> float | None:
        """``seconds`` of CPU per turn started, in ms."""
        if seconds is None or not self.started:
            return None
        return round(seconds / self.started * 1_000, 1)

    def report(self, deadline_ms: float) -> dict[str, Any]:
        """The step as printed."""
        return {
            "rate_per_s": round(self.rate, 2),
            "seconds": self.seconds,
            "due": self.due,
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
            "cpu_ms_per_turn": {
                "server": self.per_turn_ms(self.server_cpu_s),
                "postgres": self.per_turn_ms(self.postgres_cpu_s),
                "generator": self.per_turn_ms(self.cpu_s),
            },
        }


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
            json={"user_id": DEMO_USER, "reply": REPLIES[index % len(REPLIES)]},
        )
        if ended.status_code == 200:
            step.ended += 1
        else:
            step.failed(f"end {ended.status_code}")
    except httpx.HTTPError as error:
        step.failed(type(error).__name__)


async def run_rate(base: str, rate: float, seconds: float, first: int = 0) -> Step:
    """Turns arriving at ``rate`` per second for ``seconds``; each one started and ended.

    ``first`` numbers the first arrival, so that consecutive runs on one
    server ask new questions.
    """
    step = Step(rate=rate, seconds=seconds)
    limits = httpx.Limits(max_connections=2_000, max_keepalive_connections=2_000)
    headers = {"Authorization": f"Bearer {AGENT_KEY}"}
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=60, limits=limits
    ) as client:
        cpu, wall = own_cpu_s(), time.perf_counter()
        async with anyio.create_task_group() as group:
            for index in range(step.due):
                due = wall + index / rate
                delay = due - time.perf_counter()
                if delay > 0:
                    await anyio.sleep(delay)
                group.start_soon(_one, client, step, first + index, due)
        step.cpu_s, step.wall_s = own_cpu_s() - cpu, time.perf_counter() - wall
    return step


@dataclass
class Target:
    """Where runs go: a fresh seeded database per run, the server's environment, and the
    PostgreSQL servers' processes (the primary's, then a replica's)."""

    backend: str
    fresh: Callable[[], str]
    checkout: str = "this"
    env: Callable[[str], dict[str, str]] = lambda db: {}
    postgres_pids: list[int] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The backend, ``+replica`` when a replica answers the searches."""
        return self.backend + ("+replica" if len(self.postgres_pids) > 1 else "")


def _seed(source: Path, backend: str, db: str) -> None:
    """Seed the demo data into ``db`` with the code of ``source`` (a checkout's ``src``)."""
    child.run(source, "-m", "tests.benchmarks.open_loop", "--child", "seed", backend, db)


def _seed_child(backend: str, db: str) -> None:
    """The seeding child: the demo agent into ``db`` (this process's ``prefrontal``)."""
    if backend == "sqlite":
        from tests.servers.conftest import seeded

        anyio.run(seeded, Path(db))
    else:
        from tests.servers.test_http_postgres import seeded_postgres

        anyio.run(seeded_postgres, db)
    print(json.dumps({"seeded": db}))


def _pid(server: Server) -> int | None:
    pid_file = server.root / "data" / "postmaster.pid"
    return int(pid_file.read_text().split()[0]) if pid_file.exists() else None


@dataclass
class PostgresPlace:
    """The tests' throwaway PostgreSQL server, and a streaming replica of it when one runs."""

    primary: Server
    standby: Server | None = None


@contextlib.contextmanager
def target(
    backend: str, source: Path, checkout: str, place: PostgresPlace | None = None
) -> Iterator[Target]:
    """Seed the demo data once with ``source``'s code; every :meth:`Target.fresh` is a new copy
    of it, served by that code. On PostgreSQL, the databases are ``place.primary``'s; when
    ``place.standby`` runs, the server's searches read its copy of each one."""
    code = {"PYTHONPATH": str(source)}
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="prefrontal-open-loop-") as tmp:
            template = Path(tmp) / "template.db"
            _seed(source, backend, str(template))
            copies = iter(range(1_000_000))

            def fresh_file() -> str:
                path = Path(tmp) / f"run-{next(copies)}.db"
                shutil.copyfile(template, path)
                for old in Path(tmp).glob("run-*.db*"):
                    if not old.name.startswith(path.name):
                        old.unlink(missing_ok=True)
                return str(path)

            yield Target(backend, fresh_file, checkout, lambda db: code)
        return
    assert place is not None
    server, standby = place.primary, place.standby
    prefix = f"open_loop_{checkout}" + ("_replica" if standby is not None else "")
    template_dsn = server.create_database(f"{prefix}_template")
    _seed(source, backend, template_dsn)
    name = urlsplit(template_dsn).path.lstrip("/")
    copies = iter(range(1_000_000))

    def fresh_database() -> str:
        copy = f"{prefix}_{next(copies)}"
        server._psql(f'CREATE DATABASE "{copy}" TEMPLATE "{name}"')
        return server.dsn(copy)

    def environment(db: str) -> dict[str, str]:
        if standby is None:
            return code
        return code | {"PREFRONTAL_READ_DSNS": standby.dsn(urlsplit(db).path.lstrip("/"))}

    found = [_pid(server), None if standby is None else _pid(standby)]
    pids = [pid for pid in found if pid is not None]
    yield Target(backend, fresh_database, checkout, environment, pids)


def _listeners(base: str) -> list[str]:
    """The sockets listening on ``base``'s port (one per worker with ``SO_REUSEPORT``)."""
    port = int(base.rsplit(":", 1)[1])
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return ["?"] * 64
    return [line for line in lines if line.split()[1].endswith(f":{port:04X}") and " 0A " in line]


def measured(base: str, server_pid: int, rate: float, seconds: float, place: Target) -> Step:
    """:func:`run_rate`, with the CPU of the server's processes and of PostgreSQL."""
    server, databases = TreeCpu(server_pid), [TreeCpu(pid) for pid in place.postgres_pids]
    server.start()
    for database in databases:
        database.start()
    step = anyio.run(run_rate, base, rate, seconds, _first(base))
    step.server_cpu_s = server.seconds()
    if databases:
        step.postgres_cpu_s = sum(database.seconds() or 0.0 for database in databases)
    return step


_ARRIVALS: dict[str, int] = {}


def _first(base: str) -> int:
    """The number of the next arrival to ``base`` (so that each one asks a new question)."""
    return _ARRIVALS.get(base, 0)


@contextlib.contextmanager
def served(place: Target, workers: int, args: argparse.Namespace) -> Iterator[tuple[str, int]]:
    """A fresh server of ``workers`` processes on a fresh copy of the data, warmed up.

    Yields its base URL and its first process's pid.
    """
    options = ("--deadline-ms", str(args.deadline_ms), "--workers", str(workers))
    db = place.fresh()
    with http_server(db, *options, test_clock=False, **place.env(db)) as (base, process):
        deadline = time.monotonic() + 30
        while workers > 1 and time.monotonic() < deadline:  # the other workers finish starting
            if len(_listeners(base)) >= workers:
                break
            time.sleep(0.2)
        if args.warmup:
            anyio.run(run_rate, base, min(args.start, 5.0), args.warmup, 10_000_000)
        yield base, process.pid


def print_step(label: dict[str, Any], phase: str, step: Step, deadline_ms: float) -> None:
    """One run as one JSON line."""
    print(json.dumps(label | {"phase": phase} | step.report(deadline_ms)), flush=True)


def capacity(place: Target, workers: int, args: argparse.Namespace) -> dict[str, Any]:
    """Bracket, confirm by bisection, then run at ``--load`` of the capacity."""
    label = {"backend": place.label, "workers": workers, "checkout": place.checkout}
    began = time.monotonic()
    held_short, failed_short = 0.0, 0.0
    with served(place, workers, args) as (base, pid):
        rate = args.start
        while rate <= args.max_rate:
            step = measured(base, pid, rate, args.probe, place)
            _ARRIVALS[base] = _first(base) + step.due
            print_step(label, "bracket", step, args.deadline_ms)
            if not step.held(args.deadline_ms):
                failed_short = rate
                break
            held_short, rate = rate, rate * args.step
    confirmed, failed = 0.0, failed_short or args.max_rate * args.step
    candidate = held_short or args.start / args.step
    runs: list[Step] = []
    for _ in range(args.confirmations):
        with served(place, workers, args) as (base, pid):
            step = measured(base, pid, candidate, args.hold, place)
        print_step(label, "confirm", step, args.deadline_ms)
        runs.append(step)
        if step.held(args.deadline_ms):
            confirmed = candidate
        else:
            failed = candidate
        if failed / max(confirmed, 1e-9) <= 1 + args.precision:
            break
        candidate = math.sqrt(confirmed * failed) if confirmed else candidate / args.step
    summary: dict[str, Any] = label | {
        "capacity_per_s": round(confirmed, 2),
        "lowest_failed_per_s": round(failed, 2),
        "hold_s": args.hold,
    }
    held_runs = [r for r in runs if r.rate == confirmed]
    if held_runs:
        summary["at_capacity"] = held_runs[-1].report(args.deadline_ms)
    if confirmed:
        with served(place, workers, args) as (base, pid):
            loaded = measured(base, pid, confirmed * args.load, args.hold, place)
        print_step(label, "at_load", loaded, args.deadline_ms)
        summary["at_load"] = loaded.report(args.deadline_ms) | {"share": args.load}
    summary["minutes"] = round((time.monotonic() - began) / 60, 1)
    print(json.dumps(summary | {"phase": "summary"}), flush=True)
    return summary


def _cell(value: Any, unit: str = "") -> str:
    return "-" if value is None else f"{value}{unit}"


def table(results: list[dict[str, Any]], cores: int, hold_s: float) -> str:
    """The summaries as a Markdown table, with the ratios: two workers to one, this checkout to
    the other, a replica to the primary alone."""
    head = (
        f"| checkout | backend | workers | capacity (turns/s held {hold_s:g} s) | lowest failed | "
        "at load: rate | p50 | p99 | max | errors / degraded | "
        "CPU ms a turn: server / postgres / generator | "
        f"{cores} cores / CPU a turn | generator, share of a core |"
    )
    lines = [head, "|" + "---|" * 13]
    for r in results:
        load = r.get("at_load") or {}
        cpu = load.get("cpu_ms_per_turn") or (r.get("at_capacity") or {}).get("cpu_ms_per_turn")
        cpu = cpu or {}
        parts = [cpu.get("server"), cpu.get("postgres"), cpu.get("generator")]
        total = sum(p for p in parts if p is not None)
        ceiling = round(cores * 1_000 / total, 1) if total else None
        cells = [
            r["checkout"],
            r["backend"],
            str(r["workers"]),
            _cell(r["capacity_per_s"]),
            _cell(r["lowest_failed_per_s"]),
            _cell(load.get("rate_per_s")),
            _cell(load.get("p50_ms"), " ms"),
            _cell(load.get("p99_ms"), " ms"),
            _cell(load.get("max_ms"), " ms"),
            f"{load.get('errors', '-')} / {load.get('degraded', '-')}",
            " / ".join(_cell(p) for p in parts),
            _cell(ceiling, " turns/s"),
            _cell(load.get("generator_cpu_per_s")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", *ratios(results)])


def ratios(results: list[dict[str, Any]]) -> list[str]:
    """Each capacity against its counterpart: two workers to one, this checkout to the other,
    the primary with a replica to the primary alone (same run)."""
    by = {(r["checkout"], r["backend"], r["workers"]): r["capacity_per_s"] for r in results}
    lines = []
    for (checkout, backend, workers), capacity in by.items():
        pairs = [
            ("two workers to one", (checkout, backend, 1), workers == 2),
            ("this checkout to the other", ("against", backend, workers), checkout == "this"),
            (
                "primary and replica to the primary alone",
                (checkout, backend.removesuffix("+replica"), workers),
                backend.endswith("+replica"),
            ),
        ]
        for what, other, applies in pairs:
            base = by.get(other)
            if applies and base and capacity:
                lines.append(
                    f"{checkout} {backend}, {workers} worker(s): {what} {capacity / base:.2f}"
                )
    return lines


def main(argv: list[str] | None = None) -> None:
    """Measure the capacities the module describes; print JSON lines, then a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--hold", type=float, default=60.0, help="Seconds a rate must hold.")
    parser.add_argument("--probe", type=float, default=6.0, help="Seconds a bracketing step.")
    parser.add_argument("--start", type=float, default=5.0, help="First rate (turns/s).")
    parser.add_argument("--step", type=float, default=1.4, help="Rate multiplier per step.")
    parser.add_argument("--max-rate", type=float, default=1_000.0)
    parser.add_argument("--confirmations", type=int, default=3, help="Runs of --hold, at most.")
    parser.add_argument(
        "--precision", type=float, default=0.2, help="Stop when failed/held is within this."
    )
    parser.add_argument("--warmup", type=float, default=2.0, help="Seconds first, not counted.")
    parser.add_argument("--load", type=float, default=0.8, help="Share of capacity to run at.")
    parser.add_argument("--deadline-ms", type=float, default=1_000.0)
    parser.add_argument("--against", help="Another checkout's src/, measured in the same run.")
    parser.add_argument(
        "--replica", action="store_true", help="PostgreSQL: also with a streaming replica."
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _seed_child(*args.child[1:])
        return
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    sources = {"this": child.ROOT / "src"}
    if args.against:
        sources["against"] = Path(args.against).resolve()
    began = time.monotonic()
    results: list[dict[str, Any]] = []
    for backend in backends:
        if backend == "sqlite":
            results += _measure_all(backend, sources, args)
            continue
        from tests.postgres_server import running_replica, running_server

        with running_server() as server:
            results += _measure_all(backend, sources, args, PostgresPlace(server))
            if args.replica:
                with running_replica(server) as standby:
                    place = PostgresPlace(server, standby)  # this checkout's: it names replicas
                    results += _measure_all(backend, {"this": sources["this"]}, args, place)
    cores = os.cpu_count() or 1
    print(f"\n{table(results, cores, args.hold)}")
    print(f"\nwhole run: {(time.monotonic() - began) / 60:.1f} minutes", flush=True)


def _measure_all(
    backend: str,
    sources: dict[str, Path],
    args: argparse.Namespace,
    place: PostgresPlace | None = None,
) -> list[dict[str, Any]]:
    """The capacity of each worker count, each checkout's right after the other's."""
    found = []
    with contextlib.ExitStack() as stack:
        targets = [
            stack.enter_context(target(backend, source, checkout, place))
            for checkout, source in sources.items()
        ]
        for workers in args.workers:
            for place_of_checkout in targets:
                found.append(capacity(place_of_checkout, workers, args))
    return found


if __name__ == "__main__":
    main()
