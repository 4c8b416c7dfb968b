"""Top-10 search on the in-memory store at scale: p50 and p95, against another checkout in one run.

    python -m tests.benchmarks.memory_search --items 100000
    python -m tests.benchmarks.memory_search --items 100000 --against /tmp/base --rounds 2
    python -m tests.benchmarks.memory_search --items 50000 --hybrid --against /tmp/base
    python -m tests.benchmarks.memory_search --items 100000 --hybrid --dense --rounds 1
    python -m tests.benchmarks.memory_search --items 100000 --hybrid --dense --parts --against /tmp/base

Each measurement runs in a subprocess of its own (``DIR/src`` first on the
path for ``--against DIR``): ``--items`` synthetic episodic items of one
user (``prefrontal.testing.synthetic``) put in an in-memory store, then the
200 synthetic questions searched once untimed and once timed, top 10, in
the event loop. With ``--against`` the two checkouts alternate ``--rounds``
times, which one goes first alternating too, and the ratios of the medians
are printed. ``--hybrid`` gives the store the 384-dimension hashing
embedder, so each search is hybrid (BM25 and cosine); with ``--dense`` its
vectors are projected by a fixed random matrix (:class:`Projected`), dense
like a sentence model's. Reports peak RSS (the load's) and RSS once loaded
(``rss_mb``) too; ``--parts`` times each part of a search
(:data:`PARTS`). Prints JSON; it measures and
never fails on a figure. Beside the wall clock's p50 and p95, ``search_cpu``:
the thread's CPU time per search, steadier on a shared machine; ``get``:
the wall time of a ``get`` of 10 ids (each item read back with its
embedding).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


PARTS = {
    "view": ("prefrontal.stores.memory.view", "View", "__init__"),
    "bm25": ("prefrontal.stores.memory.view", "View", "bm25"),
    "screen": ("prefrontal.stores.memory.view", "View", "screened"),
    "exact": ("prefrontal.stores.memory.view", "View", "exact"),
    "median": ("prefrontal.stores.memory.hybrid", None, "_median"),
    "cut": ("prefrontal.stores.memory.hybrid", None, "_contenders"),
    "cut_dense": ("prefrontal.stores.memory.hybrid", None, "_kth_largest"),
    "hybrid_top": ("prefrontal.stores.memory.hybrid", None, "hybrid_top"),
    "whole": ("prefrontal.stores.memory.memory", "InMemoryMemoryStore", "_whole"),
}
"""Parts of a search timed by ``--parts``, where the checkout has them: the index view, BM25,
the screening scan, exact cosines (within the median too), the median, the fused cut (from the
best rows, or over every position), the whole of the fused top k, and the hits' items made
whole again (their embeddings given back)."""


def _timed_parts() -> dict[str, list[float]]:
    """Wrap each of :data:`PARTS` the code has so that it adds its thread time to a list."""
    import importlib

    spent: dict[str, list[float]] = {}
    for name, (module_name, owner_name, attribute) in PARTS.items():
        module = importlib.import_module(module_name)
        owner = module if owner_name is None else getattr(module, owner_name)
        inner = getattr(owner, attribute, None)
        if inner is None:
            continue
        log = spent[name] = []

        def timed(*args: object, _inner: Any = inner, _log: list[float] = log) -> object:
            started = time.thread_time()
            try:
                return _inner(*args)
            finally:
                _log.append(time.thread_time() - started)

        setattr(owner, attribute, timed)
        if owner_name is None and attribute == "hybrid_top":
            agent_index = importlib.import_module("prefrontal.stores.memory.agent_index")
            setattr(agent_index, "hybrid_top", timed)  # noqa: B010 (imported by name there)
    return spent


async def _parts(store: MemoryStore) -> dict[str, float]:
    """The p50 over the 200 questions of each part's thread time in one search, in ms."""
    from prefrontal.stores import MemoryQuery
    from prefrontal.testing.synthetic import questions
    from tests.benchmarks.scale import NOW, TENANT

    spent = _timed_parts()
    per_search: dict[str, list[float]] = {name: [] for name in spent}
    for text in questions(200):
        for log in spent.values():
            log.clear()
        await store.search(TENANT, MemoryQuery(text=text, limit=10, now=NOW))
        for name, log in spent.items():
            per_search[name].append(sum(log))
    return {f"part_{name}_p50": 1000 * statistics.median(t) for name, t in per_search.items()}


async def measure(
    items: int, hybrid: bool = False, dense: bool = False, parts: bool = False
) -> dict[str, float]:
    """p50 and p95 of a top-10 search, in milliseconds, over ``items`` items; peak RSS in MB;
    with ``parts``, each part's thread time in a search (:data:`PARTS`), after the timed runs."""
    from prefrontal.retrieval.embedder import HashingEmbedder
    from prefrontal.stores.memory.memory import InMemoryMemoryStore
    from prefrontal.testing.synthetic import memories
    from tests.benchmarks.scale import DIMENSIONS, START, TENANT, _cuts, _searches

    embedder = (Projected(DIMENSIONS) if dense else HashingEmbedder(DIMENSIONS)) if hybrid else None
    store = InMemoryMemoryStore(embedder=embedder)
    loaded = list(memories(items, tenant=TENANT, start=START))
    await store.put_many(loaded)
    ids = [item.item_id for item in loaded[:: max(1, len(loaded) // 2_000)]]
    del loaded
    figures = _cuts("search", await _searches(store, rounds=200, warm_up=200))
    figures |= _cuts("search_cpu", await _cpu_times(store))
    figures |= _cuts("get", await _gets(store, ids))
    figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures["rss_mb"] = _rss_mb()
    figures["load_average"] = os.getloadavg()[0]
    if parts:
        figures |= await _parts(store)
    return figures


def _rss_mb() -> float:
    """This process's resident set now, in MB (the store held, the load's garbage collected)."""
    import gc

    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


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


async def _gets(store: MemoryStore, ids: list[str]) -> list[float]:
    """The wall time of 200 ``get`` calls of 10 of ``ids`` each: items read back whole."""
    from tests.benchmarks.scale import TENANT

    times = []
    for start in range(0, 2_000, 10):
        batch = [ids[(start + n) % len(ids)] for n in range(10)]
        started = time.perf_counter()
        await store.get(TENANT, batch)
        times.append(time.perf_counter() - started)
    return times


def _child(source: Path, items: int, hybrid: bool, dense: bool, parts: bool) -> dict[str, float]:
    arguments = ["--items", str(items), *(["--hybrid"] if hybrid else [])]
    arguments += ["--dense"] if dense else []
    arguments += ["--parts"] if parts else []
    figures: dict[str, float] = child.module("tests.benchmarks.memory_search", source, *arguments)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.memory_search")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--against", type=Path, help="another checkout, measured in the same run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hybrid", action="store_true", help="search with the hashing embedder")
    parser.add_argument("--dense", action="store_true", help="project the vectors: dense ones")
    parser.add_argument("--parts", action="store_true", help="time each part of a search too")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(anyio.run(measure, args.items, args.hybrid, args.dense, args.parts)))
        return
    sources = {"this": HERE / "src"}
    if args.against is not None:
        sources["against"] = args.against / "src"
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    for round_ in range(args.rounds):
        order = list(sources) if round_ % 2 == 0 else list(reversed(sources))
        for name in order:
            figures = _child(sources[name], args.items, args.hybrid, args.dense, args.parts)
            runs[name].append(figures)
    out: dict[str, object] = {"items": args.items}
    medians = {
        name: {key: statistics.median(r[key] for r in measured) for key in measured[0]}
        for name, measured in runs.items()
    }
    out |= medians
    if "against" in medians:
        out["ratio"] = {
            key: round(medians["this"][key] / medians["against"][key], 3)
            for key in medians["this"]
            if medians["against"].get(key)
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
