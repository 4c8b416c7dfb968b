"""Top-10 search on the in-memory store at scale: p50 and p95, against another checkout in one run.

    python -m tests.benchmarks.memory_search --items 100000
    python -m tests.benchmarks.memory_search --items 100000 --against /tmp/base --rounds 2
    python -m tests.benchmarks.memory_search --items 50000 --hybrid --against /tmp/base
    python -m tests.benchmarks.memory_search --items 100000 --hybrid --dense --rounds 1

Each measurement runs in a subprocess of its own (``DIR/src`` first on the
path for ``--against DIR``): ``--items`` synthetic episodic items of one
user (``prefrontal.testing.synthetic``) put in an in-memory store, then the
200 synthetic questions searched once untimed and once timed, top 10, in
the event loop. With ``--against`` the two checkouts alternate ``--rounds``
times, which one goes first alternating too, and the ratios of the medians
are printed. ``--hybrid`` gives the store the 384-dimension hashing
embedder, so each search is hybrid (BM25 and cosine); with ``--dense`` its
vectors are projected by a fixed random matrix (:class:`Projected`), dense
like a sentence model's. Reports peak RSS too. Prints JSON; it measures and
never fails on a figure. Beside the wall clock's p50 and p95, ``search_cpu``:
the thread's CPU time per search, steadier on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import numpy as np

from tests.benchmarks import child

if TYPE_CHECKING:
    from prefrontal.stores import MemoryStore

HERE = Path(__file__).resolve().parents[2]


class Projected:
    """The hashing embedder's vectors times a fixed random square matrix: dense unit vectors
    whose cosines still follow shared words, as a sentence model's roughly do."""

    def __init__(self, dimensions: int) -> None:
        from prefrontal.retrieval.embedder import HashingEmbedder

        self._inner = HashingEmbedder(dimensions)
        rng = np.random.default_rng(384)
        self._projection = rng.normal(size=(dimensions, dimensions))
        self.name = f"projected-{dimensions}"
        self.dimensions = dimensions

    async def embed(self, texts: list[str]) -> list[tuple[float, ...]]:
        sparse = np.asarray(await self._inner.embed(texts), dtype=np.float64)
        dense = sparse @ self._projection
        dense /= np.maximum(np.linalg.norm(dense, axis=1, keepdims=True), 1e-12)
        return [tuple(row) for row in dense.tolist()]


async def measure(items: int, hybrid: bool = False, dense: bool = False) -> dict[str, float]:
    """p50 and p95 of a top-10 search, in milliseconds, over ``items`` items; peak RSS in MB."""
    from prefrontal.retrieval.embedder import HashingEmbedder
    from prefrontal.stores.memory.memory import InMemoryMemoryStore
    from prefrontal.testing.synthetic import memories
    from tests.benchmarks.scale import DIMENSIONS, START, TENANT, _cuts, _searches

    embedder = (Projected(DIMENSIONS) if dense else HashingEmbedder(DIMENSIONS)) if hybrid else None
    store = InMemoryMemoryStore(embedder=embedder)
    await store.put_many(list(memories(items, tenant=TENANT, start=START)))
    figures = _cuts("search", await _searches(store, rounds=200, warm_up=200))
    figures |= _cuts("search_cpu", await _cpu_times(store))
    figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return figures


async def _cpu_times(store: MemoryStore) -> list[float]:
    """The CPU time of this thread in each of the 200 questions' searches (steadier than the
    wall clock on a shared machine: time spent waiting for a core is left out)."""
    from prefrontal.stores import MemoryQuery
    from prefrontal.testing.synthetic import questions
    from tests.benchmarks.scale import NOW, TENANT

    times = []
    for text in questions(200):
        query = MemoryQuery(text=text, limit=10, now=NOW)
        started = time.thread_time()
        await store.search(TENANT, query)
        times.append(time.thread_time() - started)
    return times


def _child(source: Path, items: int, hybrid: bool, dense: bool) -> dict[str, float]:
    arguments = ["--items", str(items), *(["--hybrid"] if hybrid else [])]
    arguments += ["--dense"] if dense else []
    figures: dict[str, float] = child.module("tests.benchmarks.memory_search", source, *arguments)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.memory_search")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--against", type=Path, help="another checkout, measured in the same run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hybrid", action="store_true", help="search with the hashing embedder")
    parser.add_argument("--dense", action="store_true", help="project the vectors: dense ones")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(anyio.run(measure, args.items, args.hybrid, args.dense)))
        return
    sources = {"this": HERE / "src"}
    if args.against is not None:
        sources["against"] = args.against / "src"
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    for round_ in range(args.rounds):
        order = list(sources) if round_ % 2 == 0 else list(reversed(sources))
        for name in order:
            runs[name].append(_child(sources[name], args.items, args.hybrid, args.dense))
    out: dict[str, object] = {"items": args.items}
    medians = {
        name: {key: statistics.median(r[key] for r in measured) for key in measured[0]}
        for name, measured in runs.items()
    }
    out |= medians
    if "against" in medians:
        out["ratio"] = {
            key: round(medians["this"][key] / medians["against"][key], 3) for key in medians["this"]
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
