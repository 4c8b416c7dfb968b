"""The first turn of a fresh process against its warm turns, on a large SQLite file.

``python -m tests.benchmarks.first_turn --store /tmp/scale100k`` copies
``hybrid.db`` (built by :mod:`tests.benchmarks.scale`) to a temporary
directory, runs one process that opens it and searches once (it builds the
vector files beside the copy: ``prepare_s``), then starts ``--workers``
fresh processes at once, ``--repeats`` times (3). Each opens the stores with the 384-dimension
hashing embedder, times its first ``start_turn`` (default deadline), then
``--turns`` more, each in a new session of its own (a session an earlier
process left would let the recall gate answer from its buffer instead of
searching, a turn several times cheaper), and prints one JSON line:

- ``open_ms``: from building the stores to the orchestrator entered
  (``async with``), which opens them (:mod:`prefrontal.orchestrator.opening`);
- ``first_ms``: the first turn, with its status and the phases not ``ok``
  (``cut``): a phase cut at the deadline shows there;
- ``warm_p50_ms``: the median of the turns after it; ``ratio``: first / warm
  (``median_ratio`` and ``max_ratio`` over every worker of every round);
- ``first_cpu_ms``/``warm_cpu_p50_ms``/``cpu_ratio``: the same in CPU time
  of the whole process (every thread), which other processes on a loaded
  machine disturb less than the wall clock;
- ``rss_mb``/``pss_mb``: the process's resident and proportional set size
  after its turns, and ``vectors_rss_mb``/``vectors_pss_mb`` the part of
  them that maps the vector files (shared pages count once across the
  processes in PSS).

``--postgres N`` fills a throwaway PostgreSQL server (``tests/postgres_server.py``)
with ``N`` items with vectors instead (``fill_s``) and times fresh processes
against it the same way, one after the other, each with another vector cache
(``vector_cache`` of ``open_stores``): ``off`` (every search reads every
visible vector from the server), ``process`` (a cache of the process's own),
``files_built`` (files in a fresh cache directory: this process builds them)
and ``files_mapped`` (the next process, mapping the files the last one left).

``--warm-process`` has each worker take two untimed turns on a store of a
few items first, so that what the process pays once whatever the data
(imports, the tokenizer, the first SQLite connections) is outside the
figure and the first turn shows what the 100,000 items cost cold.

``--src DIR`` runs the workers with another checkout's ``src`` (e.g. an
older main) for a comparison on the same machine. Figures are reported,
never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

import anyio

from tests.benchmarks import child

WORKER = """
import json, os, statistics, sys, tempfile, time, anyio
from datetime import timedelta
from pathlib import Path

from prefrontal import Orchestrator, OrchestratorConfig, TurnRequest
from prefrontal.demo import seed
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.testing.synthetic import questions
from tests.benchmarks.first_turn import memory, opened, vectors_marker
from tests.benchmarks.scale import DEMO_AGENT, DEMO_USER, DIMENSIONS, NOW, Ticking

async def turns(target: str, asked: list[str]) -> tuple[float, list, list, dict]:
    started = time.perf_counter()
    stores = opened(target, HashingEmbedder(DIMENSIONS))
    clock = Ticking(NOW + timedelta(days=1))
    times, results = [], []  # (wall, cpu) ms per turn: cpu is every thread's of the process
    async with Orchestrator(stores, OrchestratorConfig(), clock=clock) as orchestrator:
        open_ms = (time.perf_counter() - started) * 1e3
        for number, text in enumerate(asked):
            # a session of this process's own: one an earlier process left would let the
            # recall gate reuse its buffer instead of searching
            request = TurnRequest(agent_id=DEMO_AGENT, user_id=DEMO_USER,
                                  session_id=f"p{os.getpid()}-s{number}", user_input=text)
            started, cpu = time.perf_counter(), time.process_time()
            results.append(await orchestrator.start_turn(request))
            times.append(((time.perf_counter() - started) * 1e3,
                          (time.process_time() - cpu) * 1e3))
        figures = memory(vectors_marker(target))
    return open_ms, times, results, figures

async def main() -> None:
    asked = questions(int(sys.argv[2]) + 1)
    if sys.argv[3] == "warm":  # the process's own first use, on a store of a few items
        with tempfile.TemporaryDirectory() as scratch:
            small = str(Path(scratch) / "small.db")
            stores = opened(small, HashingEmbedder(DIMENSIONS))
            await seed(stores)
            await stores.aclose()
            await turns(small, asked[-2:])
    open_ms, times, results, figures = await turns(sys.argv[1], asked)
    first = results[0].trace
    cut = [p.name for p in first.phases if p.status != "ok"]
    print(json.dumps({"open_ms": open_ms, "first_ms": times[0][0],
                      "first_status": str(first.status), "cut": cut,
                      "warm_p50_ms": statistics.median(wall for wall, _ in times[1:]),
                      "first_cpu_ms": times[0][1],
                      "warm_cpu_p50_ms": statistics.median(cpu for _, cpu in times[1:]),
                      **figures}))

anyio.run(main)
"""

PREPARE = """
import sys, time, anyio
from pathlib import Path
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryQuery
from tests.benchmarks.scale import DIMENSIONS, NOW, QUESTION, TENANT, _open

async def main() -> None:
    stores = _open(Path(sys.argv[1]), HashingEmbedder(DIMENSIONS))
    started = time.perf_counter()
    await stores.episodic.search(TENANT, MemoryQuery(text=QUESTION, limit=10, now=NOW))
    print(time.perf_counter() - started)
    await stores.aclose()

anyio.run(main)
"""


def vectors_marker(target: str) -> str:
    """What the paths of the vector files of ``target`` hold."""
    if target.startswith("postgres:"):
        return target.split(":", 3)[2]
    return Path(target).name + ".vectors"


def opened(target: str, embedder: Any) -> Any:
    """The stores at ``target``: a SQLite file, or ``postgres:SCHEMA:CACHE:DSN`` (``CACHE``:
    ``off``, ``process`` or a directory for the vector cache's files)."""
    if target.startswith("postgres:"):
        from prefrontal.stores import postgres

        _, schema, choice, dsn = target.split(":", 3)
        cache = {"off": False, "process": True}.get(choice, choice)
        return postgres.open_stores(
            dsn, embedder=embedder, schema=schema, max_size=8, vector_cache=cache
        )
    from tests.benchmarks.scale import _open

    return _open(Path(target), embedder)


FILL = """
import itertools, sys, time, anyio
from prefrontal.demo import seed
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.testing.synthetic import memories
from tests.benchmarks.first_turn import opened
from tests.benchmarks.scale import BATCH, DIMENSIONS, START, TENANT

async def main() -> None:
    started = time.perf_counter()
    stores = opened(sys.argv[1], HashingEmbedder(DIMENSIONS))
    generated = memories(int(sys.argv[2]), tenant=TENANT, start=START)
    while batch := list(itertools.islice(generated, BATCH)):
        await stores.episodic.put_many(batch)
    await seed(stores)
    await stores.aclose()
    print(time.perf_counter() - started)

anyio.run(main)
"""


def postgres(items: int, turns: int) -> dict[str, Any]:
    """Fill a throwaway server's schema with ``items`` items with vectors, then time a fresh
    process's turns against it with each vector cache in turn (the module docstring)."""
    import asyncpg

    from tests.postgres_server import running_server

    with running_server() as server:
        dsn = server.create_database("first")
        fill_s = child.run(None, "-c", FILL, f"postgres:first:off:{dsn}", str(items))

        async def analyse() -> None:
            connection = await asyncpg.connect(dsn, server_settings={"search_path": "first"})
            await connection.execute("VACUUM ANALYZE")
            await connection.close()

        anyio.run(analyse)
        found: dict[str, Any] = {}
        with tempfile.TemporaryDirectory(prefix="prefrontal-pgvectors-") as files:
            runs = {"off": "off", "process": "process", "files_built": files}
            runs["files_mapped"] = files
            for name, cache in runs.items():
                target = f"postgres:first:{cache}:{dsn}"
                figures = child.run(None, "-c", WORKER, target, str(turns), "bare")
                for field in ("first_ms", "warm_p50_ms"):
                    figures[field] = round(figures[field], 1)
                figures["ratio"] = round(figures["first_ms"] / figures["warm_p50_ms"], 2)
                found[name] = figures
    off = found["off"]["warm_p50_ms"]
    speedup = {name: round(off / figures["warm_p50_ms"], 1) for name, figures in found.items()}
    return {
        "fill_s": round(float(fill_s), 1),
        "load": round(os.getloadavg()[0], 1),
        "warm_p50_off_over": speedup,
        "workers": found,
    }


def memory(marker: str) -> dict[str, float]:
    """This process's RSS and PSS (MB), and the part mapping files whose path holds ``marker``."""
    figures = {"rss_mb": 0.0, "pss_mb": 0.0, "vectors_rss_mb": 0.0, "vectors_pss_mb": 0.0}
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].endswith(":"):
            inside = marker in line
            continue
        if len(fields) >= 2 and fields[0] in ("Rss:", "Pss:"):
            mb = int(fields[1]) / 1024
            name = fields[0][:-1].lower()
            figures[f"{name}_mb"] += mb
            if inside:
                figures[f"vectors_{name}_mb"] += mb
    return {key: round(value, 1) for key, value in figures.items()}


def run(
    store: Path, *, workers: int, turns: int, src: Path | None, process: str, repeats: int
) -> dict[str, Any]:
    """Prepare a copy of ``store``'s ``hybrid.db``, then time ``workers`` fresh processes
    ``repeats`` times; the median ratio of each worker's first turn to its warm ones."""
    rounds: list[list[dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="prefrontal-first-") as scratch:
        database = Path(scratch) / "hybrid.db"
        shutil.copyfile(store / "hybrid.db", database)
        prepare_s = child.run(src, "-c", PREPARE, str(database))
        for _ in range(repeats):
            rounds.append(_workers(database, workers, turns, process, src))
    ratios = [figures["ratio"] for found in rounds for figures in found]
    cpu_ratios = [figures["cpu_ratio"] for found in rounds for figures in found]
    return {
        "prepare_s": round(float(prepare_s), 2),
        "median_ratio": statistics.median(ratios),
        "max_ratio": max(ratios),
        "median_cpu_ratio": statistics.median(cpu_ratios),
        "rounds": rounds,
    }


def _workers(
    database: Path, workers: int, turns: int, process: str, src: Path | None
) -> list[dict[str, Any]]:
    """``workers`` fresh processes started at once over ``database``: their figures."""
    started = [
        child.start(src, "-c", WORKER, str(database), str(turns), process) for _ in range(workers)
    ]
    found: list[dict[str, Any]] = [child.finish(worker) for worker in started]
    for figures in found:
        figures["open_ms"] = round(figures["open_ms"], 1)
        figures["first_ms"] = round(figures["first_ms"], 1)
        figures["warm_p50_ms"] = round(figures["warm_p50_ms"], 1)
        figures["ratio"] = round(figures["first_ms"] / figures["warm_p50_ms"], 2)
        figures["first_cpu_ms"] = round(figures["first_cpu_ms"], 1)
        figures["warm_cpu_p50_ms"] = round(figures["warm_cpu_p50_ms"], 1)
        figures["cpu_ratio"] = round(figures["first_cpu_ms"] / figures["warm_cpu_p50_ms"], 2)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.first_turn")
    parser.add_argument("--store", type=Path, help="a directory holding hybrid.db")
    parser.add_argument("--postgres", type=int, default=0, help="items, on PostgreSQL instead")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--src", type=Path, default=None)
    parser.add_argument(
        "--warm-process", action="store_true", help="first turns on a tiny store, untimed"
    )
    options = parser.parse_args(argv)
    if options.postgres:
        print(json.dumps(postgres(options.postgres, options.turns)))
        return
    process = "warm" if options.warm_process else "bare"
    figures = run(
        options.store,
        workers=options.workers,
        turns=options.turns,
        src=options.src,
        process=process,
        repeats=options.repeats,
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
