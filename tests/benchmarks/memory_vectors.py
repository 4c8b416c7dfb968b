"""The in-memory store's vector signal and whole hybrid search, timed against another checkout.

    python -m tests.benchmarks.memory_vectors --items 20000 --against /work/main --rounds 2

Each measurement runs in a subprocess of its own (``DIR/src`` first on the
path for ``--against DIR``), the checkouts alternating: ``--items``
synthetic items with the 384-dimension hashing embedder, then one query's
``vector_matches`` and whole ``search`` (top 10) timed over five calls
each, in milliseconds. Prints JSON lines; it measures and never fails on a
figure.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import anyio

from tests.benchmarks import child

HERE = Path(__file__).resolve().parents[2]
CALLS = 5


async def measure(items: int) -> dict[str, float]:
    """Mean milliseconds of ``vector_matches`` and of ``search`` over ``items`` items."""
    from prefrontal.retrieval.embedder import HashingEmbedder
    from prefrontal.stores import MemoryQuery
    from prefrontal.stores.memory.memory import InMemoryMemoryStore
    from prefrontal.testing.synthetic import memories
    from tests.benchmarks.scale import DIMENSIONS, START, TENANT

    embedder = HashingEmbedder(DIMENSIONS)
    store = InMemoryMemoryStore(embedder=embedder)
    await store.put_many(list(memories(items, tenant=TENANT, start=START)))
    query = MemoryQuery(text="what did we decide about the payment review", limit=10, now=START)
    embedding = tuple((await embedder.embed([query.text]))[0])
    began = time.perf_counter()
    for _ in range(CALLS):
        await store.vector_matches(TENANT, query, embedding)
    vector = (time.perf_counter() - began) / CALLS * 1e3
    began = time.perf_counter()
    for _ in range(CALLS):
        await store.search(TENANT, query)
    return {"vector_matches_ms": vector, "search_ms": (time.perf_counter() - began) / CALLS * 1e3}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.memory_vectors")
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--against", type=Path, help="another checkout, measured in the same run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(anyio.run(measure, args.items)))
        return
    sources = {"this": HERE / "src"}
    if args.against is not None:
        sources["against"] = args.against / "src"
    for _ in range(args.rounds):
        for name, source in sources.items():
            figures = child.module(
                "tests.benchmarks.memory_vectors", source, "--items", str(args.items)
            )
            print(json.dumps({"source": name, **figures}))


if __name__ == "__main__":
    main()
