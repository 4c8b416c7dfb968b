"""Warm turns of the demo agent over a large SQLite file: wall and CPU per turn and per phase.

``python -m tests.benchmarks.warm_turn --store /tmp/scale100k`` copies
``hybrid.db`` (built by :mod:`tests.benchmarks.scale`) to a temporary
directory, has one process open it and search once (it builds the vector
files beside the copy), then runs ``--rounds`` rounds (3) of one child
process per checkout: this one, and with ``--against OLD/src`` an older
checkout's ``src`` too, alternating, each on a fresh copy of that prepared
directory (the turns write: a child must not see another's sessions). Each child opens the
stores with the 384-dimension hashing embedder, takes ``--warmup`` untimed
turns (2), then ``--turns`` timed ones (20), each with another question of
:func:`prefrontal.testing.synthetic.questions` in a session of its own (a
reused session would let the recall gate answer from its buffer instead of
searching), waits for the turn's writes behind it (recall counts, which
the next turn's rerank reads) before the next, and reports per turn the
wall time, the CPU time of the whole process (every thread: the store's
workers too), each phase's duration from the turn's trace, and the
process's minor page faults and system CPU time during the turn (the
kernel's part of the CPU time: mostly entering pages of the mapped
database file into the page tables).

It prints one JSON line: per checkout the p50 of the turn's wall and CPU
time and of each phase's duration (over every turn of every round), and,
with ``--against``, ``ratio``: old p50 / new p50 of each. ``same_bundles``
says whether both checkouts assembled the same bundle text and fragments
for every question (a digest per turn). Figures are reported, never asserted.

``--parts`` also times the parts of the SQLite searches and the neighbour
reads (:data:`PARTS`): per turn, the wall and the CPU time of the thread
inside each (summed over the turn's searches, which run at once), p50
over the turns. The timers add their own cost: compare turns with and
without them, never against each other.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.benchmarks import child

PARTS = {
    "search": ("prefrontal.stores.sqlite.memory", "_Search.__call__"),
    "bm25_top": ("prefrontal.stores.sqlite.topk", "by_rowid"),
    "bm25_postings": ("prefrontal.stores.sqlite.topk", "_postings"),
    "bm25_more": ("prefrontal.stores.sqlite.topk", "rows_scores"),
    "allowed": ("prefrontal.stores.sqlite.vector_file", "MappedRows.allowed"),
    "scan": ("prefrontal.stores.sqlite.hybrid", "HybridSearch._scan"),
    "contenders": ("prefrontal.stores.sqlite.hybrid", "HybridSearch._contenders"),
    "rows_read": ("prefrontal.stores.sqlite.memory", "best_rows"),
    "items_decoded": ("prefrontal.stores.sqlite.memory", "_item"),
    "around": ("prefrontal.stores.sqlite.memory", "SqliteMemoryStore.around"),
}
"""With ``--parts``: each part timed, as module and (dotted) function. Parts nest
(``bm25_postings`` is inside ``bm25_top``, both inside ``search``) and overlap (the scan
runs beside the BM25 top); ``around`` is the whole call as the phase awaits it."""


def timed_parts(totals: dict[str, list[float]]) -> None:
    """Wrap each part of :data:`PARTS` the checkout has: ``totals[name]`` adds up the wall
    and thread CPU seconds spent inside (an older checkout may lack a part)."""
    import asyncio
    import functools
    import importlib
    import threading

    guard = threading.Lock()

    def wrap(name: str, function: Any) -> Any:
        def add(wall: float, cpu: float) -> None:
            with guard:
                totals[name][0] += wall
                totals[name][1] += cpu

        if asyncio.iscoroutinefunction(function):

            @functools.wraps(function)
            async def waited(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await function(*args, **kwargs)
                finally:
                    add(time.perf_counter() - started, 0.0)

            return waited

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started, cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                add(time.perf_counter() - started, time.thread_time() - cpu)

        return timed

    for name, (module_name, dotted) in PARTS.items():
        totals[name] = [0.0, 0.0]
        module = importlib.import_module(module_name)
        *owners, attribute = dotted.split(".")
        owner: Any = module
        for step in owners:
            owner = getattr(owner, step, None)
        function = getattr(owner, attribute, None) if owner is not None else None
        if function is not None:
            setattr(owner, attribute, wrap(name, function))


WORKER = """
import hashlib, json, resource, sys, time, anyio
from datetime import timedelta
from pathlib import Path

from prefrontal import Orchestrator, OrchestratorConfig, TurnRequest
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.testing.synthetic import questions
from tests.benchmarks.scale import DEMO_AGENT, DEMO_USER, DIMENSIONS, NOW, Ticking, _open
from tests.benchmarks.warm_turn import timed_parts

def digest(result) -> str:
    bundle = result.bundle
    fragments = [f.model_dump(mode="json") for f in bundle.fragments]
    for fragment in fragments:
        fragment.pop("turn_id", None)
    body = json.dumps([bundle.text, fragments], sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:16]

async def main() -> None:
    database, warmup, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    totals = {}
    if sys.argv[4] == "parts":
        timed_parts(totals)
    asked = questions(warmup + count)
    stores = _open(Path(database), HashingEmbedder(DIMENSIONS))
    clock = Ticking(NOW + timedelta(days=1))
    turns = []
    async with Orchestrator(stores, OrchestratorConfig(), clock=clock) as orchestrator:
        for number, text in enumerate(asked):
            request = TurnRequest(agent_id=DEMO_AGENT, user_id=DEMO_USER,
                                  session_id=f"s{number}", user_input=text)
            for total in totals.values():
                total[0] = total[1] = 0.0
            usage = resource.getrusage(resource.RUSAGE_SELF)
            wall, cpu = time.perf_counter(), time.process_time()
            result = await orchestrator.start_turn(request)
            wall, cpu = (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3
            after = resource.getrusage(resource.RUSAGE_SELF)
            faults = after.ru_minflt - usage.ru_minflt
            system = (after.ru_stime - usage.ru_stime) * 1e3
            await orchestrator.wait_background()  # its writes land before the next turn reads
            if number < warmup:
                continue
            phases = {p.name: p.duration_ms for p in result.trace.phases}
            parts = {name: [wall * 1e3, cpu * 1e3] for name, (wall, cpu) in totals.items()}
            turns.append({"wall": wall, "cpu": cpu, "faults": faults, "system": system,
                          "phases": phases, "parts": parts,
                          "status": str(result.trace.status), "digest": digest(result)})
    print(json.dumps(turns))

anyio.run(main)
"""

PREPARE = """
import sys, anyio
from pathlib import Path
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryQuery
from tests.benchmarks.scale import DIMENSIONS, NOW, QUESTION, TENANT, _open

async def main() -> None:
    stores = _open(Path(sys.argv[1]), HashingEmbedder(DIMENSIONS))
    await stores.episodic.search(TENANT, MemoryQuery(text=QUESTION, limit=10, now=NOW))
    await stores.aclose()
    print("null")

anyio.run(main)
"""


def summary(turns: list[dict[str, Any]]) -> dict[str, Any]:
    """The p50 of the turns' wall and CPU time and of each phase's duration (ms); with parts,
    the p50 per turn of the wall and thread CPU time inside each."""
    phases = sorted({name for turn in turns for name in turn["phases"]})
    parts = sorted({name for turn in turns for name in turn["parts"]})
    timed = {
        name: {
            "wall": round(statistics.median(t["parts"][name][0] for t in turns), 1),
            "cpu": round(statistics.median(t["parts"][name][1] for t in turns), 1),
        }
        for name in parts
    }
    return {
        **({"parts_p50_ms": timed} if timed else {}),
        "turns": len(turns),
        "wall_p50_ms": round(statistics.median(t["wall"] for t in turns), 1),
        "cpu_p50_ms": round(statistics.median(t["cpu"] for t in turns), 1),
        "system_cpu_p50_ms": round(statistics.median(t["system"] for t in turns), 1),
        "page_faults_p50": statistics.median(t["faults"] for t in turns),
        "statuses": sorted({t["status"] for t in turns}),
        "phases_p50_ms": {
            name: round(statistics.median(t["phases"].get(name, 0.0) for t in turns), 1)
            for name in phases
        },
    }


def run(
    store: Path,
    *,
    turns: int,
    warmup: int,
    rounds: int,
    against: Path | None,
    parts: bool = False,
) -> dict[str, Any]:
    """Time warm turns on a copy of ``store``'s ``hybrid.db`` (the module docstring)."""
    sources: dict[str, Path | None] = {"new": None}
    if against is not None:
        sources["old"] = against
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
    digests: dict[str, list[list[str]]] = {name: [] for name in sources}
    with tempfile.TemporaryDirectory(prefix="prefrontal-warm-") as scratch:
        prepared = Path(scratch) / "prepared"
        prepared.mkdir()
        shutil.copyfile(store / "hybrid.db", prepared / "hybrid.db")
        child.run(None, "-c", PREPARE, str(prepared / "hybrid.db"))
        for _ in range(rounds):
            for name, source in sources.items():
                turns_run = Path(scratch) / "run"
                shutil.copytree(prepared, turns_run)
                timing = "parts" if parts else "whole"
                arguments = (str(turns_run / "hybrid.db"), str(warmup), str(turns), timing)
                measured = child.run(source, "-c", WORKER, *arguments)
                shutil.rmtree(turns_run)
                found[name].extend(measured)
                digests[name].append([turn["digest"] for turn in measured])
    figures: dict[str, Any] = {
        "load": round(os.getloadavg()[0], 1),
        **{name: summary(measured) for name, measured in found.items()},
    }
    figures["stable_bundles"] = all(
        rounds_seen == digests["new"][0] for rounds_seen in digests["new"]
    )
    if against is not None:
        figures["same_bundles"] = digests["old"] == digests["new"]
        new, old = figures["new"], figures["old"]
        figures["ratio"] = {
            "wall": round(old["wall_p50_ms"] / new["wall_p50_ms"], 2),
            "cpu": round(old["cpu_p50_ms"] / new["cpu_p50_ms"], 2),
            "phases": {
                name: round(old["phases_p50_ms"][name] / value, 2)
                for name, value in new["phases_p50_ms"].items()
                if value > 0 and name in old["phases_p50_ms"]
            },
        }
    return figures


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("PYTHONHASHSEED", "0")  # the children's: ties broken alike in each
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.warm_turn")
    parser.add_argument("--store", type=Path, required=True, help="a directory with hybrid.db")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, default=None, help="an older checkout's src")
    parser.add_argument("--parts", action="store_true", help="time the parts of the searches")
    options = parser.parse_args(argv)
    figures = run(
        options.store,
        turns=options.turns,
        warmup=options.warmup,
        rounds=options.rounds,
        against=options.against,
        parts=options.parts,
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
