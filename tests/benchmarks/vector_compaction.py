"""Vector files (SQLite, or the PostgreSQL cache) before and after compaction, mostly deleted.

``python -m tests.benchmarks.vector_compaction --store /tmp/scale50k`` copies
``hybrid.db`` (built by :mod:`tests.benchmarks.scale`: items with 384-dimension
hashing embeddings) to a temporary directory, opens it (building its vector
files), deletes ``--deleted`` (0.8) of the items chosen at random (seeded),
through the store, with compaction on its own turned off, then prints one
JSON line:

- ``items``/``live``: the items before and after the deletions;
- ``delete_s``: the deletions' time (the files' slots zeroed as they go);
- ``before``/``after``: the vector files' apparent size and the disk they
  take (``files_mb``/``disk_mb``), the slots used and live, the hybrid
  top-10 search's p50 and p95 over ``--rounds`` questions (ms), and the
  resident and proportional memory mapping the files after them
  (``vectors_rss_mb``/``vectors_pss_mb``);
- ``compact_ms``: :meth:`~prefrontal.stores.sqlite.vector_file.VectorFile.compact`;
- ``p50_ratio``: after / before, measured in this one run;
- ``same_hits``: whether every question's hits (ids, scores, signals) were
  the same after compaction as before, and ``exact``: whether those of
  ``--exact`` questions equal reading and scoring every visible vector;
- ``load``: the one-minute load average at the end.

``--parts`` adds to ``before`` and ``after`` the milliseconds per search
spent inside each part of it (:mod:`tests.benchmarks.search_parts`).

``--postgres N`` measures the PostgreSQL vector cache instead, in files
(``vector_cache`` a directory): a throwaway server (``tests/postgres_server.py``)
is filled with ``N`` such items (``fill_s``), the cache built by a first
search, the same share deleted, and
:meth:`~prefrontal.stores.postgres.vector_cache.VectorCache.compact` timed
between the two sides (``slots`` are then the cache's positions).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryQuery, ScoredMemory, sqlite
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.testing.synthetic import memories, questions
from tests.benchmarks.first_turn import memory
from tests.benchmarks.scale import DIMENSIONS, NOW, START, TENANT
from tests.benchmarks.search_parts import Parts, timed_parts

BATCH = 2_000
"""Items deleted per call."""
FILL_BATCH = 5_000
"""Items written per call when filling PostgreSQL."""

Hit = tuple[str, float, dict[str, float]]


def _hits(found: list[ScoredMemory]) -> list[Hit]:
    return [(h.item.item_id, h.score, h.signals) for h in found]


@dataclass
class Target:
    """What is measured: a store, the directory of its vector files, how to compact them."""

    store: Any
    directory: Callable[[], Path]
    compact: Callable[[], Awaitable[bool]]
    usage: Callable[[], tuple[int, int]]


def _files(directory: Path) -> dict[str, float]:
    files = [f.stat() for f in directory.iterdir() if f.name not in ("state", "snapshot")]
    return {
        "files_mb": round(sum(f.st_size for f in files) / 2**20, 1),
        "disk_mb": round(sum(f.st_blocks * 512 for f in files) / 2**20, 1),
    }


async def _searched(
    store: Any, texts: list[str], parts: Parts | None = None
) -> tuple[list[float], list[Any]]:
    """Each question's search time (s) and hits (``parts`` counted from the first)."""
    if parts is not None:
        parts.reset()
    times, found = [], []
    for text in texts:
        query = MemoryQuery(text=text, limit=10, now=NOW)
        started = time.perf_counter()
        hits = await store.search(TENANT, query)
        times.append(time.perf_counter() - started)
        found.append(_hits(hits))
    return times, found


async def _exact(store: Any, texts: list[str]) -> list[Any]:
    """The hits of reading and scoring every visible vector."""
    held, store.vectors = store.vectors, None
    try:
        return [
            _hits(await store.search(TENANT, MemoryQuery(text=t, limit=10, now=NOW))) for t in texts
        ]
    finally:
        store.vectors = held


def _figures(target: Target, times: list[float], parts: Parts | None) -> dict[str, Any]:
    used, live = target.usage()
    cuts = statistics.quantiles(times, n=100)
    directory = target.directory()
    mapped = memory(str(directory))
    return {
        **_files(directory),
        "slots": used,
        "live": live,
        "p50_ms": round(cuts[49] * 1e3, 2),
        "p95_ms": round(cuts[94] * 1e3, 2),
        "vectors_rss_mb": mapped["vectors_rss_mb"],
        "vectors_pss_mb": mapped["vectors_pss_mb"],
        **({} if parts is None else {k: round(v, 2) for k, v in parts.per_search_ms().items()}),
    }


async def measure(
    target: Target,
    ids: list[str],
    *,
    deleted: float,
    rounds: int,
    exact: int,
    parts: Parts | None = None,
) -> dict[str, Any]:
    """Delete ``deleted`` of ``ids`` at random, then search, compact and search again."""
    store = target.store
    doomed = random.Random(40).sample(ids, int(len(ids) * deleted))
    started = time.perf_counter()
    for first in range(0, len(doomed), BATCH):
        await store.delete(TENANT, doomed[first : first + BATCH])
    delete_s = time.perf_counter() - started
    texts = questions(rounds)
    await _searched(store, texts[:5])  # warm
    times, before_hits = await _searched(store, texts, parts)
    before = _figures(target, times, parts)
    started = time.perf_counter()
    compacted = await target.compact()
    compact_ms = (time.perf_counter() - started) * 1e3
    await _searched(store, texts[:5])
    times, after_hits = await _searched(store, texts, parts)
    after = _figures(target, times, parts)
    reference = await _exact(store, texts[:exact])
    return {
        "items": len(ids),
        "live": len(ids) - len(doomed),
        "delete_s": round(delete_s, 1),
        "compacted": compacted,
        "compact_ms": round(compact_ms, 1),
        "before": before,
        "after": after,
        "p50_ratio": round(after["p50_ms"] / before["p50_ms"], 2),
        "same_hits": before_hits == after_hits,
        "exact": reference == after_hits[:exact],
        "load": round(os.getloadavg()[0], 1),
    }


async def on_sqlite(database: Path, **options: Any) -> dict[str, Any]:
    """:func:`measure` on the SQLite file ``database`` (its items already written)."""
    stores = sqlite.open_stores(database, embedder=HashingEmbedder(DIMENSIONS))
    store = stores.episodic
    assert isinstance(store, SqliteMemoryStore) and store.vectors is not None
    vectors = store.vectors
    vectors.compact_share = None
    target = Target(
        store,
        lambda: vectors.directory,
        lambda: anyio.to_thread.run_sync(vectors.compact),
        vectors.usage,
    )
    try:
        await stores.open()
        ids = await anyio.to_thread.run_sync(_item_ids, database)
        return await measure(target, ids, **options)
    finally:
        await stores.aclose()


async def on_postgres(dsn: str, items: int, cache: Path, **options: Any) -> dict[str, Any]:
    """:func:`measure` on a PostgreSQL schema filled with ``items`` items, the vector cache
    in files under ``cache``."""
    from prefrontal.stores import postgres
    from prefrontal.stores.postgres.memory import PostgresMemoryStore

    stores = postgres.open_stores(
        dsn,
        schema="compaction",
        embedder=HashingEmbedder(DIMENSIONS),
        max_size=4,
        vector_cache=cache,
    )
    store = stores.episodic
    assert isinstance(store, PostgresMemoryStore) and store.vectors is not None
    vectors = store.vectors
    vectors.compact_share = None

    def directory() -> Path:
        assert vectors.directory is not None
        return vectors.directory

    target = Target(store, directory, vectors.compact, vectors.usage)
    try:
        started = time.perf_counter()
        generated = memories(items, tenant=TENANT, start=START)
        ids = []
        while batch := list(itertools.islice(generated, FILL_BATCH)):
            await store.put_many(batch)
            ids += [item.item_id for item in batch]
        fill_s = time.perf_counter() - started
        await _searched(store, questions(1))  # builds the cache
        return {"fill_s": round(fill_s, 1), **await measure(target, ids, **options)}
    finally:
        await stores.aclose()


def _item_ids(database: Path) -> list[str]:
    with sqlite3.connect(database) as connection:
        rows = connection.execute(
            "SELECT item_id FROM episodic_items WHERE agent_id = ? AND user_id = ? ORDER BY rowid",
            (TENANT.agent_id, TENANT.user_id),
        ).fetchall()
    return [row[0] for row in rows]


def _postgres(items: int, options: dict[str, Any]) -> dict[str, Any]:
    from tests.postgres_server import running_server

    with (
        running_server() as server,
        tempfile.TemporaryDirectory(prefix="prefrontal-pgcompaction-") as cache,
    ):
        dsn = server.create_database("compaction")
        return anyio.run(lambda: on_postgres(dsn, items, Path(cache), **options))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.vector_compaction")
    parser.add_argument("--store", type=Path, help="a scale build's directory (SQLite)")
    parser.add_argument("--postgres", type=int, help="fill a throwaway server with N items")
    parser.add_argument("--deleted", type=float, default=0.8, help="the share of items deleted")
    parser.add_argument("--rounds", type=int, default=200, help="timed searches each side")
    parser.add_argument("--exact", type=int, default=20, help="questions checked by exact search")
    parser.add_argument("--parts", action="store_true", help="time the hybrid search's parts")
    args = parser.parse_args(argv)
    options: dict[str, Any] = {
        "deleted": args.deleted,
        "rounds": args.rounds,
        "exact": args.exact,
        "parts": timed_parts() if args.parts else None,
    }
    if args.postgres:
        print(json.dumps(_postgres(args.postgres, options)))
        return
    if args.store is None:
        parser.error("--store or --postgres is required")
    with tempfile.TemporaryDirectory(prefix="prefrontal-compaction-") as scratch:
        database = Path(scratch) / "hybrid.db"
        shutil.copyfile(args.store / "hybrid.db", database)
        print(json.dumps(anyio.run(lambda: on_sqlite(database, **options))))


if __name__ == "__main__":
    main()
