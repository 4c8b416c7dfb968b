"""Bulk loads: ``put_many`` of many new items into a fresh store, in items a second.

    python -m tests.benchmarks.bulk_load --items 50000
    python -m tests.benchmarks.bulk_load --items 50000 --vectors
    python -m tests.benchmarks.bulk_load --items 50000 --embed
    python -m tests.benchmarks.bulk_load --items 50000 --base /tmp/base/src --repeats 3
    python -m tests.benchmarks.bulk_load --items 50000 --postgres

Each measurement runs in a subprocess of its own: it makes ``--items``
synthetic episodic items of one user (:func:`prefrontal.testing.synthetic.memories`,
made a batch at a time off the clock), opens a new SQLite file (the defaults:
``synchronous=FULL``, one sync per transaction) or, with ``--postgres``, a
new schema on a throwaway server (``tests/postgres_server.py``, ``fsync``
off), and times ``put_many`` in batches of ``--batch`` items until all are
written, the store closed. Printed per checkout: ``load_s`` and
``items_per_s`` on the clock, and ``cpu_s``, the CPU time of the loading
process (its threads included; a PostgreSQL server's is not), which other
work on a shared machine moves less.

``--vectors`` gives every item a 384-dimension hashing embedding off the
clock, so the load writes vectors but computes none; the embedding
time is reported apart (``embed_s``, ``embedded_per_s``). ``--embed`` gives
the stores that embedder instead and the items none: each ``put_many``
embeds its batch on the clock, as a load of items without vectors into a
store with an embedder does.

The parent prints a line to standard error as each measurement ends (a
comparison runs for a while), and the figures on standard output.

``--base SRC`` (another checkout's ``src``) measures it too, the two
alternating ``--repeats`` times, and reports the medians and their ratio
(this / base, in items a second). Figures are reported, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryItem, Stores, Tenant
from prefrontal.stores.memory_search import searchable_text
from prefrontal.testing.synthetic import memories
from tests.benchmarks import child

HERE = Path(__file__).resolve().parents[2]
TENANT = Tenant(agent_id="bulk-agent", user_id="bulk-user")
DIMENSIONS = 384


class _Load:
    """A load in batches: the seconds spent in ``put_many`` and embedding, counted apart."""

    def __init__(self, vectors: bool) -> None:
        self.embedder = HashingEmbedder(DIMENSIONS) if vectors else None
        """Embeds the items off the clock (``--vectors``)."""
        self.load_s = self.cpu_s = self.embed_s = 0.0

    async def embedded(self, items: list[MemoryItem]) -> list[MemoryItem]:
        """``items``, each with a hashing embedding of its text when loading vectors."""
        if self.embedder is None:
            return items
        started = time.perf_counter()
        vectors = await self.embedder.embed([searchable_text(item) for item in items])
        out = [
            item.model_copy(update={"embedding": tuple(vector)})
            for item, vector in zip(items, vectors, strict=True)
        ]
        self.embed_s += time.perf_counter() - started
        return out

    async def put(self, stores: Stores, items: list[MemoryItem]) -> None:
        started, cpu = time.perf_counter(), time.process_time()
        await stores.episodic.put_many(items)
        self.load_s += time.perf_counter() - started
        self.cpu_s += time.process_time() - cpu


async def measure(
    count: int, *, batch: int, vectors: bool, embed: bool, dsn: str | None, schema: str
) -> dict[str, float]:
    """One load of ``count`` new items (see the module docstring)."""
    load = _Load(vectors)
    generated = memories(count, tenant=TENANT)
    embedder = HashingEmbedder(DIMENSIONS) if embed else None
    with tempfile.TemporaryDirectory(prefix="prefrontal-bulk-") as scratch:
        if dsn is None:
            from prefrontal.stores.sqlite import open_stores

            stores = open_stores(Path(scratch) / "bulk.db", embedder=embedder)
        else:
            from prefrontal.stores import postgres

            stores = postgres.open_stores(dsn, schema=schema, max_size=2, embedder=embedder)
        while items := list(itertools.islice(generated, batch)):
            await load.put(stores, await load.embedded(items))
        started, cpu = time.perf_counter(), time.process_time()
        await stores.aclose()
        load.load_s += time.perf_counter() - started
        load.cpu_s += time.process_time() - cpu
    figures = {"items": count, "load_s": load.load_s, "items_per_s": count / load.load_s}
    figures |= {"cpu_s": load.cpu_s, "items_per_cpu_s": count / load.cpu_s}
    if vectors:
        figures |= {"embed_s": load.embed_s, "embedded_per_s": count / load.embed_s}
    return figures


def _run(source: Path, arguments: list[str]) -> dict[str, float]:
    figures: dict[str, float] = child.module("tests.benchmarks.bulk_load", source, *arguments)
    return figures


@contextlib.contextmanager
def _server(wanted: bool) -> Iterator[str | None]:
    """A throwaway PostgreSQL server's DSN when ``wanted``, else ``None``."""
    if not wanted:
        yield None
        return
    from tests.postgres_server import running_server

    with running_server() as server:
        yield server.create_database("bulk")


def compare(args: argparse.Namespace) -> dict[str, Any]:
    """Each checkout's figures (medians over the repeats), alternating, and the ratio."""
    sources = {"this": HERE / "src"} | ({"base": args.base} if args.base else {})
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    common = ["--items", str(args.items), "--batch", str(args.batch)]
    common += ["--vectors"] if args.vectors else []
    common += ["--embed"] if args.embed else []
    with _server(args.postgres) as dsn:
        for repeat, (name, source) in itertools.product(range(args.repeats), sources.items()):
            where = [] if dsn is None else ["--dsn", dsn, "--schema", f"{name}{repeat}"]
            runs[name].append(figures := _run(source, [*common, *where]))
            print(
                f"{name} {repeat + 1}/{args.repeats}: {figures['items_per_s']:,.0f} items/s,"
                f" {figures['items_per_cpu_s']:,.0f} per CPU second",
                file=sys.stderr,
                flush=True,
            )
    table: dict[str, Any] = {
        name: {key: statistics.median(run[key] for run in got) for key in got[0]}
        for name, got in runs.items()
    }
    if "base" in table:
        table["ratio"] = table["this"]["items_per_s"] / table["base"]["items_per_s"]
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bulk_load")
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=5_000)
    parser.add_argument("--vectors", action="store_true", help="items carry 384-d vectors")
    parser.add_argument("--embed", action="store_true", help="the stores embed (384-d)")
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL server")
    parser.add_argument("--base", type=Path, help="another checkout's src, measured too")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dsn", help=argparse.SUPPRESS)
    parser.add_argument("--schema", default="bulk", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        figures = anyio.run(
            lambda: measure(
                args.items,
                batch=args.batch,
                vectors=args.vectors,
                embed=args.embed,
                dsn=args.dsn,
                schema=args.schema,
            )
        )
        print(json.dumps(figures))
        return
    print(json.dumps(compare(args), indent=1))


if __name__ == "__main__":
    main()
