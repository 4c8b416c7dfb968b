"""Turns and searches on large SQLite stores, built once and reused.

``python -m tests.benchmarks.scale build --items 100000 --out /tmp/scale100k``
writes ``lexical.db`` (synthetic episodic items, demo agent seeded) and, unless
``--no-hybrid``, ``hybrid.db`` (the same items with 384-dimension hashing
embeddings). Building is the slow part (minutes per 100,000 items); the
files are left where they are for every later run.

``python -m tests.benchmarks.scale run --store /tmp/scale100k`` copies the
files to a temporary directory (a run writes turns and traces, the built
files stay as built), opens them with the installed prefrontal and prints
one JSON line of figures measured inside the event loop, in milliseconds:

- ``search_p50``/``search_p95``: lexical top-10 search, 200 questions;
- ``new_turn_p50``/``new_turn_p95``: ``start_turn`` in a new session;
- ``continuing_turn_p50``/``continuing_turn_p95``: ``start_turn`` in a
  session whose earlier turns were ended (each turn the child of the last);
- ``hybrid_p50``/``hybrid_p95``: top-10 search with the hashing embedder;
- ``hybrid_first``: the first hybrid search after opening the copy, which
  builds its vector files from every stored vector (the copy has none; a
  fresh process over files already built: :mod:`tests.benchmarks.first_turn`)
  and starts reading the postings into arrays; every later figure is taken
  once they are read (``lexical_ready``), as in a process past its first searches.

``--hybrid-only`` (``run`` and ``compare``) measures the hybrid searches alone;
``--parts`` adds ``part_*``: the milliseconds per timed hybrid search spent
inside each of its parts (:mod:`tests.benchmarks.search_parts`; the timers
add a little to every figure, so compare runs that both have them), and
``part_cpu``: the process's CPU time per search, every thread's (what a
search costs a loaded machine, where its legs cannot run at once).

``python -m tests.benchmarks.scale compare --store DIR --base SRC`` runs
``run`` in subprocesses, alternating this checkout's ``src`` and ``SRC``
(another checkout's ``src``, e.g. a ``git worktree`` of an older main), so
that both meet the same machine, and prints each figure with its ratio
(this / base). Figures are reported, never asserted.
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
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

from prefrontal import Orchestrator, OrchestratorConfig, TurnRequest, TurnResult
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryQuery, MemoryStore, Stores, Tenant
from prefrontal.testing.synthetic import memories, questions
from tests.benchmarks.search_parts import Parts, timed_parts

TENANT = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
START = datetime(2024, 1, 1, tzinfo=UTC)
"""Items are a minute apart from here: a million end before :data:`NOW`."""
NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
DIMENSIONS = 384
BATCH = 5_000
QUESTION = "Is the payment review for the launch on track, and what did Lena say about it?"


def _open(path: Path, embedder: HashingEmbedder | None = None, **options: Any) -> Stores:
    """SQLite stores at ``path``, in this checkout or an older one (``Stores.sqlite`` then)."""
    try:
        from prefrontal.stores.sqlite import open_stores
    except ImportError:  # an older checkout, compared against
        opened: Stores = getattr(Stores, "sqlite")(path, embedder=embedder, **options)  # noqa: B009
        return opened
    return open_stores(path, embedder=embedder, **options)


class Ticking:
    """A clock that moves a second forward at every reading, from ``start``."""

    def __init__(self, start: datetime = NOW) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


async def build(items: int, out: Path, *, hybrid: bool) -> dict[str, float]:
    """Write ``lexical.db`` (and ``hybrid.db``) of ``items`` items under ``out``; seconds each."""
    took = {"lexical_build_s": await _fill(out / "lexical.db", items, None)}
    if hybrid:
        embedder = HashingEmbedder(DIMENSIONS)
        took["hybrid_build_s"] = await _fill(out / "hybrid.db", items, embedder)
    return took


async def _fill(path: Path, count: int, embedder: HashingEmbedder | None) -> float:
    started = time.perf_counter()
    stores = _open(path, embedder, synchronous="NORMAL")
    generated = memories(count, tenant=TENANT, start=START)
    while batch := list(itertools.islice(generated, BATCH)):
        await stores.episodic.put_many(batch)
    await seed(stores)
    await stores.aclose()
    return time.perf_counter() - started


async def _arrays_read(stores: Stores) -> None:
    """Wait for the episodic store's postings to be read into arrays behind the first search
    (a checkout that reads them at opening, or keeps none, has nothing to wait for): the
    figures are those of a process past its first searches."""
    ready = getattr(stores.episodic, "lexical_ready", None)
    if ready is not None:
        await ready()


def _cuts(name: str, times: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(times, n=100)
    return {f"{name}_p50": cuts[49] * 1e3, f"{name}_p95": cuts[94] * 1e3}


async def _timed(calls: list[Callable[[], Awaitable[object]]]) -> list[float]:
    times = []
    for call in calls:
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return times


async def _searches(
    store: MemoryStore, rounds: int, warm_up: int = 50, parts: Parts | None = None
) -> list[float]:
    """``rounds`` top-10 searches (200 questions, round robin) after ``warm_up`` untimed ones;
    ``parts`` counted from the first timed one."""
    asked = itertools.cycle([MemoryQuery(text=q, limit=10, now=NOW) for q in questions(200)])
    times = []
    for number in range(rounds + warm_up):
        query = next(asked)
        if number == warm_up and parts is not None:
            parts.reset()
        started, cpu = time.perf_counter(), time.process_time()
        await store.search(TENANT, query)
        if number >= warm_up:
            times.append(time.perf_counter() - started)
            if parts is not None:
                parts.add("cpu", time.process_time() - cpu)
    return times


NEW_SESSIONS_START = NOW + timedelta(days=1)
"""When the new sessions' clock starts: a day after :data:`NOW`, past the conversation
window (an hour) of what :func:`_continuing` said, so that new sessions measured after a
continuing session in the same store (PostgreSQL's repeats) start from the state the
first ones did, instead of carrying that session's last exchanges into their queries."""


async def _new_sessions(stores: Stores, rounds: int) -> list[float]:
    """``start_turn`` timed in a new session each time, a day after :data:`NOW`."""
    clock = Ticking(NEW_SESSIONS_START)
    orchestrator = Orchestrator(stores, OrchestratorConfig(deadline_ms=30_000), clock=clock)
    numbers = itertools.count()

    def turn() -> Awaitable[TurnResult]:
        request = TurnRequest(
            agent_id=DEMO_AGENT,
            user_id=DEMO_USER,
            session_id=f"new-{next(numbers)}",
            user_input=QUESTION,
        )
        return orchestrator.start_turn(request)

    await _timed([turn for _ in range(5)])
    return await _timed([turn for _ in range(rounds)])


async def _continuing(stores: Stores, rounds: int) -> list[float]:
    """``start_turn`` timed in one session, each turn ended (untimed) before the next starts."""
    orchestrator = Orchestrator(stores, OrchestratorConfig(deadline_ms=30_000), clock=Ticking())
    parent: str | None = None
    times = []
    for number in range(rounds + 10):
        request = TurnRequest(
            agent_id=DEMO_AGENT,
            user_id=DEMO_USER,
            session_id="continuing",
            user_input=f"Question {number}: {QUESTION}",
            parent_turn_id=parent,
        )
        started = time.perf_counter()
        result = await orchestrator.start_turn(request)
        if number >= 10:
            times.append(time.perf_counter() - started)
        parent = result.context.turn_id
        await orchestrator.end_turn(result, f"Answer {number}: Lena signs it off on Friday.")
    return times


async def run(
    lexical: Path | None, hybrid: Path | None, *, rounds: int, parts: bool = False
) -> dict[str, float]:
    """Every figure, on the files ``lexical`` and ``hybrid`` (each when given); ``parts``:
    with the hybrid search's parts (:mod:`tests.benchmarks.search_parts`)."""
    figures: dict[str, float] = {}
    if lexical is not None:
        stores = _open(lexical)
        await stores.episodic.search(TENANT, MemoryQuery(text=QUESTION, limit=10, now=NOW))
        await _arrays_read(stores)
        figures |= _cuts("search", await _searches(stores.episodic, rounds * 4))
        figures |= _cuts("new_turn", await _new_sessions(stores, rounds))
        figures |= _cuts("continuing_turn", await _continuing(stores, rounds))
        await stores.aclose()
    if hybrid is not None:
        figures |= await _hybrid(hybrid, rounds, timed_parts() if parts else None)
    return figures


async def _hybrid(path: Path, rounds: int, parts: Parts | None = None) -> dict[str, float]:
    """Hybrid top-10 searches; ``hybrid_first``: the first search after opening the file.

    The first search migrates nothing (opening did) but builds the vector
    files beside the copy from every stored vector: that is its figure.
    """
    stores = _open(path, HashingEmbedder(DIMENSIONS))
    first = MemoryQuery(text=QUESTION, limit=10, now=NOW)
    (took,) = await _timed([lambda: stores.episodic.search(TENANT, first)])
    figures = {"hybrid_first": took * 1e3}
    await _arrays_read(stores)
    searched = await _searches(stores.episodic, rounds // 2, warm_up=5, parts=parts)
    figures |= _cuts("hybrid", searched)
    if parts is not None:
        figures |= parts.per_search_ms()
    await stores.aclose()
    return figures


def _copy(database: Path, directory: Path) -> Path:
    """Copy ``database`` (with its write-ahead log, if one was left) into ``directory``."""
    for path in (database, database.with_name(f"{database.name}-wal")):
        if path.exists():
            shutil.copyfile(path, directory / path.name)
    return directory / database.name


def run_on_copies(
    store: Path, *, rounds: int, hybrid: bool = True, lexical: bool = True, parts: bool = False
) -> dict[str, float]:
    """:func:`run` on copies of the files under ``store`` (each unless told not to)."""
    with tempfile.TemporaryDirectory(prefix="prefrontal-scale-") as scratch:
        plain = _copy(store / "lexical.db", Path(scratch)) if lexical else None
        copied = None
        if hybrid and (store / "hybrid.db").exists():
            copied = _copy(store / "hybrid.db", Path(scratch))
        return anyio.run(lambda: run(plain, copied, rounds=rounds, parts=parts))


def compare(
    store: Path,
    base: Path,
    *,
    rounds: int,
    repeats: int,
    hybrid: bool,
    lexical: bool = True,
    parts: bool = False,
) -> dict[str, list[float]]:
    """``run`` for this checkout and for ``base``, alternating; per figure, each run's values."""
    here = Path(__file__).resolve().parents[2]
    got: dict[str, list[dict[str, float]]] = {"this": [], "base": []}
    for _ in range(repeats):
        for name, source in (("base", base), ("this", here / "src")):
            environment = os.environ | {"PYTHONPATH": f"{source}{os.pathsep}{here}"}
            command = [sys.executable, "-m", "tests.benchmarks.scale", "run"]
            command += ["--store", str(store), "--rounds", str(rounds)]
            command += [] if hybrid else ["--no-hybrid"]
            command += [] if lexical else ["--hybrid-only"]
            command += ["--parts"] if parts else []
            done = subprocess.run(
                command, env=environment, cwd=here, check=True, capture_output=True, text=True
            )
            got[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {
        key: [
            statistics.median(r.get(key, 0.0) for r in got["this"]),
            statistics.median(r.get(key, 0.0) for r in got["base"]),
        ]
        for key in {**got["this"][0], **got["base"][0]}
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.scale")
    commands = parser.add_subparsers(dest="command", required=True)
    building = commands.add_parser("build", help="write the stores once")
    building.add_argument("--items", type=int, default=100_000)
    building.add_argument("--out", type=Path, required=True)
    building.add_argument("--no-hybrid", action="store_true")
    running = commands.add_parser("run", help="measure on copies of the built stores")
    running.add_argument("--store", type=Path, required=True)
    running.add_argument("--rounds", type=int, default=50)
    running.add_argument("--no-hybrid", action="store_true", help="skip hybrid.db")
    running.add_argument("--hybrid-only", action="store_true", help="only hybrid.db")
    running.add_argument("--parts", action="store_true", help="time the hybrid search's parts")
    comparing = commands.add_parser("compare", help="this checkout against another's src")
    comparing.add_argument("--store", type=Path, required=True)
    comparing.add_argument("--base", type=Path, required=True)
    comparing.add_argument("--rounds", type=int, default=50)
    comparing.add_argument("--repeats", type=int, default=1)
    comparing.add_argument("--no-hybrid", action="store_true", help="skip hybrid.db")
    comparing.add_argument("--hybrid-only", action="store_true", help="only hybrid.db")
    comparing.add_argument("--parts", action="store_true", help="time the hybrid search's parts")
    arguments = parser.parse_args(argv)
    if arguments.command == "build":
        arguments.out.mkdir(parents=True, exist_ok=True)
        took = anyio.run(
            lambda: build(arguments.items, arguments.out, hybrid=not arguments.no_hybrid)
        )
        print(json.dumps(took))
    elif arguments.command == "run":
        import prefrontal

        hybrid = not arguments.no_hybrid
        figures = run_on_copies(
            arguments.store,
            rounds=arguments.rounds,
            hybrid=hybrid,
            lexical=not arguments.hybrid_only,
            parts=arguments.parts,
        )
        print(f"prefrontal from {Path(prefrontal.__file__).parent}", file=sys.stderr)
        print(json.dumps(figures))
    else:
        table = compare(
            arguments.store,
            arguments.base,
            rounds=arguments.rounds,
            repeats=arguments.repeats,
            hybrid=not arguments.no_hybrid,
            lexical=not arguments.hybrid_only,
            parts=arguments.parts,
        )
        for key, (this, base) in table.items():
            ratio = f"{this / base:.2f}" if base else "-"
            print(f"{key:>22}: {this:8.2f} ms, base {base:8.2f} ms, ratio {ratio}")


if __name__ == "__main__":
    main()
