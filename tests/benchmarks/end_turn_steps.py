"""``end_turn`` on 100,000 SQLite items, by step: p50, p90, p95, against another checkout in one run.

    python tests/benchmarks/end_turn_steps.py --db /tmp/bench.db                     # this checkout
    python tests/benchmarks/end_turn_steps.py --db /tmp/bench.db --against /tmp/base  # and another

The file ``--db`` is built once when it does not exist (100,000 synthetic
episodic items of the demo user, the demo agent seeded; minutes) and
copied afresh for every measurement, so each starts from the same state.
A measurement runs in a subprocess of its own (``DIR/src`` first on the
path for ``--against DIR``): one session, each turn the child of the last,
``--warmup`` turns then ``--turns`` timed ones (the rolling summary folds on
every call once the window is full), ``synchronous=FULL`` (``--synchronous
NORMAL`` to leave out the disk's sync), no extractor.
``end_turn`` and ``start_turn`` are timed in the event loop (the start of
a turn in a loop whose turns are ended: history, summary and buffer to
read); the steps are the durations ``end_turn``'s trace records;
``commit_floor`` is a one-row write transaction on a file of its own in the
same folder, what the disk's sync alone costs any commit there (the least
``end_turn``, one commit, can take). With ``--against`` the two checkouts
alternate ``--rounds`` times, which one goes first alternating too (use an
even number), and the ratios of the medians of their p50s are printed:
times compared in one run, on one machine. Prints JSON; it measures and
never fails on a figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from prefrontal.stores.sqlite.driver import sqlite3

SIZE = 100_000
Synchronous = Literal["FULL", "NORMAL"]


def sqlite_stores(path: Path, synchronous: Synchronous = "FULL") -> Any:
    """The stores in the SQLite file at ``path`` (through whichever opener the checkout has)."""
    from prefrontal import Stores

    try:
        from prefrontal.stores.sqlite import open_stores
    except ImportError:  # an older checkout
        return getattr(Stores, "sqlite")(path)  # noqa: B009 (absent from newer checkouts)
    return open_stores(path, synchronous=synchronous)


START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


class Ticking:
    """A clock one second further at every reading."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


async def build(path: Path) -> None:
    """The corpus: ``SIZE`` episodic items of the demo user, the demo agent seeded."""
    from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
    from prefrontal.stores import Tenant
    from prefrontal.testing.synthetic import memories

    stores = sqlite_stores(path)
    items = memories(SIZE, tenant=Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER))
    while batch := list(itertools.islice(items, 5_000)):
        await stores.episodic.put_many(batch)
    await seed(stores)
    await stores.aclose()


async def measure(path: Path, warmup: int, turns: int, synchronous: Synchronous) -> dict[str, Any]:
    """Time ``turns`` end_turns after ``warmup`` on the file at ``path``."""
    from prefrontal import Orchestrator, OrchestratorConfig, TurnRequest
    from prefrontal.demo import DEMO_AGENT, DEMO_USER

    stores = sqlite_stores(path, synchronous)
    orchestrator = Orchestrator(stores, OrchestratorConfig(deadline_ms=30_000), clock=Ticking())
    parent: str | None = None
    totals: list[float] = []
    starts: list[float] = []
    steps: dict[str, list[float]] = {}
    for number in range(warmup + turns):
        request = TurnRequest(
            agent_id=DEMO_AGENT,
            user_id=DEMO_USER,
            session_id="bench-end",
            user_input=f"Question {number}: is the payment review for the launch on track?",
            parent_turn_id=parent,
        )
        began = time.perf_counter()
        result = await orchestrator.start_turn(request)
        began = (time.perf_counter() - began) * 1_000
        parent = result.context.turn_id
        reply = f"Answer to {parent}: Lena signs it off on Friday. Nothing else."
        started = time.perf_counter()
        ended = await orchestrator.end_turn(result, reply)
        elapsed = (time.perf_counter() - started) * 1_000
        if number >= warmup:
            totals.append(elapsed)
            starts.append(began)
            for step in ended.trace.steps:
                steps.setdefault(step.name, []).append(step.duration_ms)
    await stores.aclose()
    figures = {"end_turn": cuts(totals), **{name: cuts(times) for name, times in steps.items()}}
    return figures | {"start_turn": cuts(starts)}


CUTS = {"p50": 49, "p90": 89, "p95": 94}


def cuts(times: list[float]) -> dict[str, float]:
    """p50, p90 and p95 of ``times``, in milliseconds."""
    points = statistics.quantiles(times, n=100)
    return {name: round(points[at], 3) for name, at in CUTS.items()}


def commit_floor(folder: Path, synchronous: str, commits: int) -> dict[str, float]:
    """The time of a one-row write transaction on a file of its own in ``folder``.

    What the disk's sync alone costs a commit (WAL, ``synchronous`` as the
    stores have it): the least any write transaction can take here.
    """
    connection = sqlite3.connect(folder / "floor.db", isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute(f"PRAGMA synchronous = {synchronous}")
    connection.execute("CREATE TABLE rows (value TEXT)")
    times = []
    for number in range(commits):
        began = time.perf_counter()
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO rows VALUES (?)", (f"row {number}",))
        connection.execute("COMMIT")
        times.append((time.perf_counter() - began) * 1_000)
    connection.close()
    return cuts(times)


def child(args: argparse.Namespace) -> None:
    import anyio

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "bench.db"
        shutil.copy(args.db, copy)
        with copy.open("rb") as written:  # on disk before the clock starts: no writeback in the way
            os.fsync(written.fileno())
        figures = anyio.run(measure, copy, args.warmup, args.turns, args.synchronous)
        figures["commit_floor"] = commit_floor(Path(folder), args.synchronous, args.turns)
        print(json.dumps(figures))


def run(checkout: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One measurement in a subprocess, with ``checkout``'s ``src`` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(checkout / "src"))
    command = [sys.executable, __file__, "--child", "--db", str(args.db)]
    command += ["--warmup", str(args.warmup), "--turns", str(args.turns)]
    command += ["--synchronous", args.synchronous]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def summary(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """The median over runs of each step's p50 and p95."""
    names = dict.fromkeys(name for figures in runs for name in figures)
    return {
        name: {
            cut: round(statistics.median(f[name][cut] for f in runs if name in f), 3)
            for cut in CUTS
            if all(cut in f[name] for f in runs if name in f)
        }
        for name in names
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--against", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--synchronous", choices=("FULL", "NORMAL"), default="FULL")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    here = Path(__file__).resolve().parents[2]
    if not args.db.exists():
        env = dict(os.environ, PYTHONPATH=str(here / "src"))
        code = "import anyio, sys; from pathlib import Path; import end_turn_steps as b; "
        code += "anyio.run(b.build, Path(sys.argv[1]))"
        env["PYTHONPATH"] += os.pathsep + str(Path(__file__).parent)
        subprocess.run([sys.executable, "-c", code, str(args.db)], env=env, check=True)
    checkouts = {"this": here} | ({"against": args.against} if args.against else {})
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    for number in range(args.rounds):
        order = list(checkouts.items())
        for name, checkout in order if number % 2 == 0 else reversed(order):
            runs[name].append(run(checkout, args))
    report: dict[str, Any] = {name: summary(figures) for name, figures in runs.items()}
    if args.against:
        this, against = report["this"], report["against"]
        report["ratio_p50"] = {
            name: round(this[name]["p50"] / against[name]["p50"], 3)
            for name in this
            if name in against and against[name]["p50"] > 0
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
