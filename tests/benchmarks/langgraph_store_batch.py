"""What an operation of LangGraph's store seat costs: LangGraph's large concurrent batch.

``python -m tests.benchmarks.langgraph_store_batch`` runs the workload of
LangGraph's upstream ``test_large_batches_async`` (6,000 concurrent
operations in one task group: per key, a put, a get, a ``list_namespaces``
of growing depth, a search of ``("test",)``, the put again and a delete)
against a :class:`PrefrontalStore` on fresh in-memory stores and on a fresh
SQLite file (``synchronous="NORMAL"``, as the ported test opens it; ``FULL``
with ``--synchronous FULL``), ``--rounds`` times, the backends taking turns.
It prints one JSON line per backend: the median round's process CPU time
per operation (``cpu_per_op_ms``) and wall time per operation
(``wall_per_op_ms``). Figures are reported, never asserted.

``--against SRC`` compares with another checkout's ``src`` in the same run:
``--alternations`` child processes for this checkout and for ``SRC`` in
turn (:mod:`tests.benchmarks.child`), one line per backend with the median
child's figures of each side and ``speedup`` (against over this, CPU).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from prefrontal.integrations.langgraph import PrefrontalStore
from prefrontal.stores import Stores, sqlite
from prefrontal.stores.sqlite.database import Synchronous
from tests.benchmarks import child

KEYS = 100
ROUNDS_OF_KEYS = 10
OPERATIONS = KEYS * ROUNDS_OF_KEYS * 6


def workload(store: PrefrontalStore) -> list[Callable[[], Awaitable[Any]]]:
    """The 6,000 operations of ``test_large_batches_async``, in its order."""
    calls: list[Callable[[], Awaitable[Any]]] = []
    for m in range(ROUNDS_OF_KEYS):
        namespace = ("test", "foo", "bar", "baz", str(m % 2))
        for i in range(KEYS):
            key, value = f"key{i}", {"foo": f"bar{i}"}
            depth = m + 1
            calls.extend(
                [
                    partial(store.aput, namespace, key, value),
                    partial(store.aget, namespace, key),
                    partial(store.alist_namespaces, prefix=None, max_depth=depth),
                    partial(store.asearch, ("test",)),
                    partial(store.aput, namespace, key, value),
                    partial(store.adelete, namespace, key),
                ]
            )
    return calls


async def one_round(backend: str, folder: Path, synchronous: Synchronous) -> tuple[float, float]:
    """Process CPU and wall seconds of the workload on fresh stores of ``backend``."""
    if backend == "memory":
        stores = Stores.in_memory()
    else:
        path = folder / f"lg-{time.monotonic_ns()}.db"
        stores = sqlite.open_stores(path, synchronous=synchronous)
    try:
        store = PrefrontalStore(stores, agent_id="agent", user_id="user")
        calls = workload(store)
        results: list[Any] = []

        async def run(call: Callable[[], Awaitable[Any]]) -> None:
            results.append(await call())

        cpu, wall = time.process_time(), time.perf_counter()
        async with anyio.create_task_group() as group:
            for call in calls:
                group.start_soon(run, call)
        spent = time.process_time() - cpu, time.perf_counter() - wall
        assert len(results) == OPERATIONS
        return spent
    finally:
        await stores.aclose()


async def measure(rounds: int, synchronous: Synchronous) -> list[dict[str, Any]]:
    """Median CPU and wall per operation of each backend over ``rounds`` timed rounds."""
    backends = ("memory", "sqlite")
    found: dict[str, list[tuple[float, float]]] = {b: [] for b in backends}
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(rounds + 1):  # the first round is untimed: imports, caches
            for backend in backends:
                spent = await one_round(backend, Path(folder), synchronous)
                if attempt:
                    found[backend].append(spent)
    return [
        {
            "mode": backend,
            "cpu_per_op_ms": round(statistics.median(c for c, _ in runs) / OPERATIONS * 1e3, 4),
            "wall_per_op_ms": round(statistics.median(w for _, w in runs) / OPERATIONS * 1e3, 4),
            "rounds": rounds,
        }
        for backend, runs in found.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--synchronous", choices=("NORMAL", "FULL"), default="NORMAL")
    parser.add_argument("--against", type=Path, help="another checkout's src, same run")
    parser.add_argument("--alternations", type=int, default=3, help="children each, with --against")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against is not None:
        arguments = ("--rounds", str(args.rounds), "--synchronous", args.synchronous)
        found = child.alternated(
            "tests.benchmarks.langgraph_store_batch",
            args.against.resolve(),
            arguments,
            args.alternations,
        )
        rows = child.compared(found, ("cpu_per_op_ms", "wall_per_op_ms"))
    else:
        rows = anyio.run(measure, args.rounds, args.synchronous)
    child.print_rows(rows, as_child=args.child)


if __name__ == "__main__":
    main()
