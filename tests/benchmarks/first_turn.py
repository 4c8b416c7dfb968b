"""The first turn of a fresh process against warm turns, on a large SQLite file.

``python -m tests.benchmarks.first_turn --store /tmp/scale100k`` copies
``hybrid.db`` (built by :mod:`tests.benchmarks.scale`) to a temporary
directory, runs one process that opens it and searches once (it builds the
vector files beside the copy: ``prepare_s``), then starts ``--workers``
fresh processes at once, ``--repeats`` times (3). Each opens the stores
with the 384-dimension hashing embedder and asks the same ``--turns`` + 1
questions, each in a new session of its own (a session an earlier process
left would let the recall gate answer from its buffer instead of
searching, a turn several times cheaper), timing every ``start_turn``
(default deadline). Process ``n`` of the run starts at question ``n``
(the list turned by ``n``), so each question is some process's first turn
and the others' warm turn. It prints one JSON line:

- ``open_ms``: from building the stores to the orchestrator entered
  (``async with``), which opens them (:mod:`prefrontal.orchestrator.opening`);
- ``first_ms``: the first turn, with its status and the phases not ``ok``
  (``cut``): a phase cut at the deadline shows there;
- ``same_warm_ms`` and ``paired_ratio``: the same question asked warm by
  the run's other processes (their median), and first / that: what the
  process being fresh costs, the question's own cost apart (questions
  differ by a third and more);
- ``warm_p50_ms`` and ``ratio``: the median of the process's own later
  turns (other questions), and first / that;
- ``first_cpu_ms``, ``same_warm_cpu_ms``, ``paired_cpu_ratio``,
  ``warm_cpu_p50_ms``, ``cpu_ratio``: the same in CPU time of the whole
  process (every thread), which other processes on a loaded machine
  disturb less than the wall clock;
- ``rss_mb``/``pss_mb``: the process's resident and proportional set size
  after its turns, ``vectors_rss_mb``/``vectors_pss_mb`` the part of them
  that maps the vector files, and ``database_rss_mb``/``database_pss_mb``
  the part that maps the database file (one map a connection; shared
  pages count once across maps and processes in PSS), and the same
  figures just after opening (``open_rss_mb`` and so on);
- for the run: the median and largest ``paired_ratio`` and ``ratio``, and
  ``warm_noise``: each warm turn against its question's median over the
  other processes, the share of them above 1.2 and the largest. A single
  warm turn strays that far with no cold cost at all: the noise any one
  first turn is measured in.

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

``--no-populate`` opens the SQLite stores with ``populate=False``: the
connections' maps of the file fill as turns read instead of at opening.

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
from tests.benchmarks.first_turn import database_of, memory, opened, vectors_marker
from tests.benchmarks.scale import DEMO_AGENT, DEMO_USER, DIMENSIONS, NOW, Ticking

async def turns(target: str, asked: list[str]) -> tuple[float, list, list, dict]:
    started = time.perf_counter()
    stores = opened(target, HashingEmbedder(DIMENSIONS))
    clock = Ticking(NOW + timedelta(days=1))
    times, results = [], []  # (wall, cpu) ms per turn: cpu is every thread's of the process
    async with Orchestrator(stores, OrchestratorConfig(), clock=clock) as orchestrator:
        open_ms = (time.perf_counter() - started) * 1e3
        at_open = memory(vectors_marker(target), database_of(target))
        for number, text in enumerate(asked):
            # a session of this process's own: one an earlier process left would let the
            # recall gate reuse its buffer instead of searching
            request = TurnRequest(agent_id=DEMO_AGENT, user_id=DEMO_USER,
                                  session_id=f"p{os.getpid()}-s{number}", user_input=text)
            started, cpu = time.perf_counter(), time.process_time()
            results.append(await orchestrator.start_turn(request))
            times.append(((time.perf_counter() - started) * 1e3,
                          (time.process_time() - cpu) * 1e3))
        figures = memory(vectors_marker(target), database_of(target))
    figures |= {f"open_{key}": value for key, value in at_open.items()}
    return open_ms, times, results, figures

async def main() -> None:
    count, shift = int(sys.argv[2]) + 1, int(sys.argv[4])
    asked = questions(count)
    if sys.argv[3] == "warm":  # the process's own first use, on a store of a few items
        with tempfile.TemporaryDirectory() as scratch:
            small = str(Path(scratch) / "small.db")
            stores = opened(small, HashingEmbedder(DIMENSIONS))
            await seed(stores)
            await stores.aclose()
            await turns(small, asked[-2:])
    order = [(shift + number) % count for number in range(count)]
    open_ms, times, results, figures = await turns(sys.argv[1], [asked[q] for q in order])
    first = results[0].trace
    cut = [p.name for p in first.phases if p.status != "ok"]
    print(json.dumps({"open_ms": open_ms, "first_status": str(first.status), "cut": cut,
                      "turns": [[q, wall, cpu] for q, (wall, cpu) in zip(order, times)],
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


def database_of(target: str) -> str | None:
    """The SQLite file of ``target``; ``None`` for PostgreSQL."""
    if target.startswith("postgres:"):
        return None
    return str(Path(target.removeprefix(UNPOPULATED)).resolve())


UNPOPULATED = "unpopulated:"
"""A SQLite target's prefix: open it with ``populate=False`` (``--no-populate``)."""


def opened(target: str, embedder: Any) -> Any:
    """The stores at ``target``: a SQLite file (``unpopulated:FILE``: its maps left to fill
    as turns read), or ``postgres:SCHEMA:CACHE:DSN`` (``CACHE``: ``off``, ``process`` or a
    directory for the vector cache's files)."""
    if target.startswith("postgres:"):
        from prefrontal.stores import postgres

        _, schema, choice, dsn = target.split(":", 3)
        cache = {"off": False, "process": True}.get(choice, choice)
        return postgres.open_stores(
            dsn, embedder=embedder, schema=schema, max_size=8, vector_cache=cache
        )
    from tests.benchmarks.scale import _open

    if target.startswith(UNPOPULATED):
        return _open(Path(target.removeprefix(UNPOPULATED)), embedder, populate=False)
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
                figures = child.run(None, "-c", WORKER, target, str(turns), "bare", "0")
                found[name] = own_figures(figures)
    off = found["off"]["warm_p50_ms"]
    speedup = {name: round(off / figures["warm_p50_ms"], 1) for name, figures in found.items()}
    return {
        "fill_s": round(float(fill_s), 1),
        "load": round(os.getloadavg()[0], 1),
        "warm_p50_off_over": speedup,
        "workers": found,
    }


def memory(marker: str, database: str | None = None) -> dict[str, float]:
    """This process's RSS and PSS (MB), the part mapping files whose path holds ``marker``
    (``vectors_*``) and the part mapping the file ``database`` (``database_*``)."""
    figures = {"rss_mb": 0.0, "pss_mb": 0.0, "vectors_rss_mb": 0.0, "vectors_pss_mb": 0.0}
    if database is not None:
        figures |= {"database_rss_mb": 0.0, "database_pss_mb": 0.0}
    part = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].endswith(":"):
            path = fields[5] if len(fields) == 6 else ""
            part = "vectors" if marker in path else "database" if path == database else None
            continue
        if len(fields) >= 2 and fields[0] in ("Rss:", "Pss:"):
            mb = int(fields[1]) / 1024
            name = fields[0][:-1].lower()
            figures[f"{name}_mb"] += mb
            if part is not None:
                figures[f"{part}_{name}_mb"] += mb
    return {key: round(value, 1) for key, value in figures.items()}


def run(
    store: Path,
    *,
    workers: int,
    turns: int,
    src: Path | None,
    process: str,
    repeats: int,
    populate: bool = True,
) -> dict[str, Any]:
    """Prepare a copy of ``store``'s ``hybrid.db``, then time ``workers`` fresh processes
    ``repeats`` times, process ``n`` of the run starting at question ``n``; each first turn
    against its own warm turns and against its question asked warm by the others."""
    rounds: list[list[dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="prefrontal-first-") as scratch:
        database = Path(scratch) / "hybrid.db"
        shutil.copyfile(store / "hybrid.db", database)
        prepare_s = child.run(src, "-c", PREPARE, str(database))
        target = f"{UNPOPULATED}{database}" if not populate else str(database)
        for round_number in range(repeats):
            shifts = [round_number * workers + worker for worker in range(workers)]
            rounds.append(_workers(target, shifts, turns, process, src))
    found = [figures for each in rounds for figures in each]
    paired(found)
    ratios = [figures["ratio"] for figures in found]
    paired_ratios = [figures["paired_ratio"] for figures in found if "paired_ratio" in figures]
    cpu_ratios = [figures["cpu_ratio"] for figures in found]
    noise = warm_noise(found)
    for figures in found:
        del figures["turns"]
    return {
        "prepare_s": round(float(prepare_s), 2),
        "median_paired_ratio": statistics.median(paired_ratios) if paired_ratios else None,
        "max_paired_ratio": max(paired_ratios, default=None),
        "median_ratio": statistics.median(ratios),
        "max_ratio": max(ratios),
        "median_cpu_ratio": statistics.median(cpu_ratios),
        "warm_noise": noise,
        "rounds": rounds,
    }


def own_figures(figures: dict[str, Any]) -> dict[str, Any]:
    """A worker's figures with its first turn, its warm median and their ratios (wall, CPU)."""
    (_, first, first_cpu), *warm = figures["turns"]
    figures["first_ms"] = round(first, 1)
    figures["first_cpu_ms"] = round(first_cpu, 1)
    figures["warm_p50_ms"] = round(statistics.median(wall for _, wall, _ in warm), 1)
    figures["warm_cpu_p50_ms"] = round(statistics.median(cpu for _, _, cpu in warm), 1)
    figures["ratio"] = round(first / figures["warm_p50_ms"], 2)
    figures["cpu_ratio"] = round(first_cpu / figures["warm_cpu_p50_ms"], 2)
    figures["open_ms"] = round(figures["open_ms"], 1)
    return figures


def _warm_of(found: list[dict[str, Any]], question: int, apart: int) -> list[tuple[float, float]]:
    """(wall, cpu) of ``question`` asked warm by every process of ``found`` but ``apart``."""
    return [
        (wall, cpu)
        for index, figures in enumerate(found)
        if index != apart
        for q, wall, cpu in figures["turns"][1:]
        if q == question
    ]


def paired(found: list[dict[str, Any]]) -> None:
    """Add to each process's figures its first question's warm median in the other
    processes (``same_warm_ms``, ``same_warm_cpu_ms``) and first / that (``paired_*``)."""
    for index, figures in enumerate(found):
        question, first, first_cpu = figures["turns"][0]
        warm = _warm_of(found, question, index)
        if not warm:
            continue
        same_wall = statistics.median(wall for wall, _ in warm)
        same_cpu = statistics.median(cpu for _, cpu in warm)
        figures["same_warm_ms"] = round(same_wall, 1)
        figures["same_warm_cpu_ms"] = round(same_cpu, 1)
        figures["paired_ratio"] = round(first / same_wall, 2)
        figures["paired_cpu_ratio"] = round(first_cpu / same_cpu, 2)


def warm_noise(found: list[dict[str, Any]]) -> dict[str, Any]:
    """Each warm turn against the median of its question asked warm by the other processes:
    how many of them exceed 1.2, of how many, and the largest such ratio."""
    ratios = []
    for index, figures in enumerate(found):
        for question, wall, _ in figures["turns"][1:]:
            others = [other for other, _ in _warm_of(found, question, index)]
            if others:
                ratios.append(wall / statistics.median(others))
    return {
        "over_1_2": sum(ratio > 1.2 for ratio in ratios),
        "of": len(ratios),
        "max": round(max(ratios, default=0.0), 2),
    }


def _workers(
    target: str, shifts: list[int], turns: int, process: str, src: Path | None
) -> list[dict[str, Any]]:
    """Fresh processes started at once over ``target``, one starting at each question
    of ``shifts``: their figures."""
    started = [
        child.start(src, "-c", WORKER, target, str(turns), process, str(shift)) for shift in shifts
    ]
    return [own_figures(child.finish(worker)) for worker in started]


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
    parser.add_argument(
        "--no-populate", action="store_true", help="open_stores(populate=False): maps fill as read"
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
        populate=not options.no_populate,
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
