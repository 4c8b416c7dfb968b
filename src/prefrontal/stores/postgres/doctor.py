"""What a PostgreSQL deployment's vector search runs on, and what to do about it (read only).

:func:`diagnose` connects to the primary and to each read DSN, changes
nothing, and reports:

- the server's version, and the ``vector`` extension: installed (its
  version and schema), offered but not installed, or not offered;
- for each memory table of the schema (``episodic``, ``semantic``): where
  its hybrid searches find the vectors (``pgvector`` when the table has its
  ``dense`` column and HNSW index, else the process cache), the column's
  type, the index's settings (``m``, ``ef_construction``) and size, and how
  many rows hold a vector (the planner's estimate);
- the replicas the primary streams to (``pg_stat_replication``: state and
  replay lag; empty without the ``pg_monitor`` role), and for each read DSN:
  whether it is a replica, how stale it is (as
  :mod:`~prefrontal.stores.postgres.replicas` measures before serving a
  search) and whether it has the schema;
- ``advice``: what to do, one sentence each (nothing when all is well).

Every finding that a missing privilege or an unreachable server hides is
reported as such, never raised: a doctor answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import asyncpg

from prefrontal.stores.postgres.dense import EF_SEARCH_SHOWN, detect
from prefrontal.stores.postgres.replicas import MAX_STALENESS

MEMORY_TABLES = ("episodic", "semantic")
"""The memory stores whose vector search is reported."""
CONNECT_TIMEOUT = 5.0
"""Seconds to wait for each server."""

_EXTENSION = """
    SELECT e.extversion, n.nspname,
           (SELECT default_version FROM pg_available_extensions WHERE name = 'vector')
    FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace
    WHERE e.extname = 'vector'"""
_OFFERED = "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
_INDEX = """
    SELECT i.reloptions, pg_relation_size(i.oid), am.amname
    FROM pg_class AS i JOIN pg_am AS am ON am.oid = i.relam
    WHERE i.oid = to_regclass($1)"""
_ROWS = "SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = to_regclass($1)"
_STREAMING = """
    SELECT application_name, coalesce(client_addr::text, 'local'), state, sync_state,
           extract(epoch FROM replay_lag)::float8
    FROM pg_stat_replication ORDER BY application_name"""
_STALENESS = """
    SELECT pg_is_in_recovery(),
           CASE WHEN NOT pg_is_in_recovery() THEN NULL
                WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn()
                THEN 0::float8
                ELSE extract(epoch FROM clock_timestamp()
                             - pg_last_xact_replay_timestamp())::float8 END,
           to_regnamespace($1) IS NOT NULL"""


@dataclass
class VectorTable:
    """Where one memory table's hybrid searches find the vectors."""

    store: str
    vector_search: str
    """``pgvector``, or ``process cache`` (the table has no usable pgvector column or index)."""
    column: str | None = None
    """The ``dense`` column's type, e.g. ``vector(384)``."""
    index: str | None = None
    """The HNSW index and its settings, e.g. ``hnsw m=16 ef_construction=128, 1.9 GB``."""
    rows: int = 0
    """Rows of the table (the planner's estimate: ``ANALYZE`` keeps it close)."""


@dataclass
class Replica:
    """A replica: streamed to by the primary, or named by a read DSN."""

    name: str
    """The application name (streamed) or the read DSN's host and database."""
    state: str
    """``streaming``, ``catchup``…; ``replica`` for a read DSN that is one; else why not."""
    lag_s: float | None = None
    """Replay lag (streamed), or staleness as searches measure it (read DSN), in seconds."""
    has_schema: bool | None = None
    """Whether a read DSN's server has the schema (``None``: not asked)."""


@dataclass
class Diagnosis:
    """Everything :func:`diagnose` found; ``advice`` says what to do."""

    server_version: str
    schema: str
    extension: str
    """``vector 0.8.2 in schema public``, ``offered (0.8.2), not installed`` or ``not offered``."""
    tables: list[VectorTable] = field(default_factory=list)
    replicas: list[Replica] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The diagnosis as plain JSON data."""
        return asdict(self)


async def diagnose(
    dsn: str,
    *,
    schema: str = "prefrontal",
    read_dsns: Sequence[str] = (),
    max_staleness: float = MAX_STALENESS,
) -> Diagnosis:
    """Look at the primary ``dsn`` and the ``read_dsns``; change nothing.

    Raises only when the primary cannot be reached (``OSError`` or asyncpg's
    connection errors): there is nothing to diagnose then.
    """
    connection = await asyncpg.connect(
        dsn, timeout=CONNECT_TIMEOUT, server_settings={"search_path": schema}
    )
    try:
        version = str(await connection.fetchval("SHOW server_version"))
        extension, advice = await _extension(connection)
        found = Diagnosis(server_version=version, schema=schema, extension=extension)
        found.advice += advice
        exists = await connection.fetchval("SELECT to_regnamespace($1) IS NOT NULL", schema)
        if not exists:
            found.advice.append(
                f"Schema {schema!r} does not exist yet: the first process that opens the "
                "stores creates it (and sets up pgvector when the extension is installed)."
            )
        else:
            for store in MEMORY_TABLES:
                table = await _table(connection, store)
                found.tables.append(table)
                found.advice += _table_advice(table, extension)
        streamed, advice = await _streamed(connection)
        found.replicas += streamed
        found.advice += advice
    finally:
        await connection.close()
    for read_dsn in read_dsns:
        replica = await _read_replica(read_dsn, schema)
        found.replicas.append(replica)
        found.advice += _replica_advice(replica, max_staleness)
    return found


async def _extension(connection: Any) -> tuple[str, list[str]]:
    """The extension in words, and the advice about it."""
    row = await connection.fetchrow(_EXTENSION)
    if row is not None:
        version, where, newest = row[0], row[1], row[2]
        advice = []
        if newest is not None and newest != version:
            advice.append(
                f"pgvector {newest} is offered: ALTER EXTENSION vector UPDATE "
                "(0.8 or later gives the iterative index scans searches use)."
            )
        elif _older_than_iterative(version):
            advice.append("pgvector before 0.8 has no iterative index scans: update it.")
        return f"vector {version} in schema {where}", advice
    offered = await connection.fetchval(_OFFERED)
    if offered is not None:
        return f"offered ({offered}), not installed", [
            "Run CREATE EXTENSION vector as a role allowed to (the database owner on "
            "PostgreSQL 13 and later, rds_superuser on RDS, cloudsqlsuperuser on Cloud SQL, "
            "after allow-listing VECTOR in azure.extensions on Azure; enabled in the "
            "dashboard on Supabase), then restart the workers: they set up the column and "
            "index at start."
        ]
    return "not offered", [
        "This server has no pgvector: searches use each process's vector cache (memory "
        "per worker grows with the table). Install pgvector, or use a managed service that "
        "offers it, to keep the vectors where the rows are."
    ]


def _older_than_iterative(version: str) -> bool:
    """Whether pgvector ``version`` predates iterative index scans (0.8.0)."""
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) < (0, 8)


async def _table(connection: Any, store: str) -> VectorTable:
    """Where ``<store>_items`` finds its vectors."""
    rows = int(await connection.fetchval(_ROWS, f"{store}_items") or 0)
    column = await detect(connection, store)
    if column is None:
        return VectorTable(store=store, vector_search="process cache", rows=rows)
    index = await connection.fetchrow(_INDEX, f"{store}_dense")
    described = None
    if index is not None:
        options = dict(option.split("=", 1) for option in index[0] or ())
        described = (
            f"{index[2]} m={options.get('m', '16')} "
            f"ef_construction={options.get('ef_construction', '64')} "
            f"{EF_SEARCH_SHOWN}, {_size(int(index[1]))}"
        )
    return VectorTable(
        store=store,
        vector_search="pgvector" if index is not None else "pgvector, no index",
        column=f"{column.kind}({column.dimensions})",
        index=described,
        rows=rows,
    )


def _size(count: int) -> str:
    """A size in bytes, in words."""
    for unit in ("bytes", "kB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return f"{count} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024  # type: ignore[assignment]
    raise AssertionError("unreachable")


def _table_advice(table: VectorTable, extension: str) -> list[str]:
    """What to do about one table."""
    if table.vector_search == "pgvector, no index":
        return [
            f"{table.store}_items has its pgvector column but no index {table.store}_dense: "
            "searches read every row. Restart a worker (it builds the index at start) or "
            "create it with the settings of docs/postgres.md."
        ]
    if table.vector_search == "process cache" and extension.startswith("vector "):
        return [
            f"{table.store}_items has no pgvector column though the extension is "
            "installed: open the stores with an embedder and dense=True (the default) "
            "once; the first process sets it up."
        ]
    return []


async def _streamed(connection: Any) -> tuple[list[Replica], list[str]]:
    """The replicas the primary streams to, and the advice about them."""
    try:
        rows = await connection.fetch(_STREAMING)
    except asyncpg.InsufficientPrivilegeError:
        return [], ["Grant pg_monitor to see the replicas the primary streams to."]
    replicas = [
        Replica(
            name=f"{row[0] or 'replica'} ({row[1]})",
            state=f"{row[2]}, {row[3]}",
            lag_s=None if row[4] is None else round(float(row[4]), 3),
        )
        for row in rows
    ]
    return replicas, []


async def _read_replica(dsn: str, schema: str) -> Replica:
    """One read DSN: a replica or not, how stale, whether it has the schema."""
    name = _shown(dsn)
    try:
        connection = await asyncpg.connect(dsn, timeout=CONNECT_TIMEOUT)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        return Replica(name=name, state=f"unreachable: {type(error).__name__}")
    try:
        recovering, staleness, has_schema = await connection.fetchrow(_STALENESS, schema)
    finally:
        await connection.close()
    if not recovering:
        return Replica(name=name, state="not a replica (a primary)", has_schema=has_schema)
    return Replica(
        name=name, state="replica", lag_s=round(float(staleness), 3), has_schema=has_schema
    )


def _replica_advice(replica: Replica, max_staleness: float) -> list[str]:
    """What to do about one read DSN."""
    if replica.state.startswith("unreachable"):
        return [f"{replica.name} is {replica.state}: searches go to the primary."]
    if replica.state != "replica":
        return [
            f"{replica.name} is not a replica: a read DSN must name a streaming replica "
            "of the primary (writes there would not reach the primary)."
        ]
    advice = []
    if not replica.has_schema:
        advice.append(
            f"{replica.name} has no schema yet: it appears once the replica replays "
            "the primary's migration; searches go to the primary meanwhile."
        )
    if replica.lag_s is not None and replica.lag_s > max_staleness:
        advice.append(
            f"{replica.name} is {replica.lag_s:.1f} s behind (more than max_staleness "
            f"{max_staleness:g} s): searches go to the primary until it catches up."
        )
    return advice


def _shown(dsn: str) -> str:
    """``dsn`` without its password."""
    head, at, tail = dsn.rpartition("@")
    if not at:
        return dsn
    scheme, _, credentials = head.partition("://")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}@{tail}"
