"""Vectors where the rows are: pgvector's column and HNSW index, when the server has them.

With an embedder and a server offering the ``vector`` extension, each memory
table gains a column ``dense`` holding each row's embedding as pgvector's
``vector(n)`` (``halfvec(n)`` past :data:`VECTOR_MAX` dimensions, none past
:data:`HALFVEC_MAX`), and an HNSW index on it by cosine distance
(:data:`M`, :data:`EF_CONSTRUCTION`). The column is kept in the row (storage
``MAIN``) and the embedding's bytes out of it (``EXTERNAL``), so scoring a
row's vector reads no TOAST. Writers that know the column pass the
vector with the row (:func:`literal`); a ``BEFORE`` trigger fills it from
``embedding`` for any other writer (and :func:`set_up` for the rows already
there), so the column never falls behind the bytes. A row whose embedding
is of another size keeps ``dense`` NULL and is never found by vector.

Everything is detected, nothing required: :func:`set_up` creates the
extension when it can, and answers with the reason when it cannot (the
store then keeps its process cache, :mod:`.vector_cache`). The extension's
objects are named by the schema it lives in, so one installation serves
every prefrontal schema of the database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
import structlog

from prefrontal.stores.statistics_owner import owner_sql

_log = structlog.get_logger("prefrontal.stores")

VECTOR_MAX = 2000
"""The most dimensions pgvector's HNSW index takes for ``vector``."""
HALFVEC_MAX = 4000
"""The most dimensions it takes for ``halfvec`` (half precision)."""
M = 16
"""HNSW's links per node (``m``), pgvector's default."""
EF_CONSTRUCTION = 128
"""HNSW's candidate list while building (``ef_construction``): twice pgvector's default, for
recall@10 of 0.99 at 100,000 items (docs/performance.md)."""
EF_SEARCH = 1000
"""HNSW's candidate list while searching (``hnsw.ef_search``) in a table of more than
:data:`SMALL_TABLE` rows, pgvector's largest: 400 fell short of recall@10 of 0.99 at 200,000
items (docs/performance.md)."""
EF_SEARCH_SMALL = 400
"""``hnsw.ef_search`` in a table of at most :data:`SMALL_TABLE` rows: recall@10 of 0.994 at
100,000 items, in less than half the time of :data:`EF_SEARCH` (docs/performance.md)."""
SMALL_TABLE = 100_000
"""The most rows (the planner's estimate, ``pg_class.reltuples``) searched with
:data:`EF_SEARCH_SMALL`."""


def ef_search_for(rows: float) -> int:
    """``hnsw.ef_search`` for a table of about ``rows`` rows (negative: never counted)."""
    return EF_SEARCH_SMALL if 0 <= rows <= SMALL_TABLE else EF_SEARCH


WALKED_ROWS = 5_000
"""Rows taken from the walk in a table of more than :data:`SMALL_TABLE` rows, of which the
nearest by exact cosine are kept: past ``hnsw.ef_search`` (1,000 at most) the iterative scan
walks on, so the graph's misses among its first 1,000 are made up from the rows after them
(recall@10 0.983 at 1,000,000 items taking ``limit`` + 16, 0.99 and more taking 5,000:
docs/postgres.md)."""
WALKED_SCAN_TUPLES = 100_000
"""``hnsw.max_scan_tuples`` of a walk taking :data:`WALKED_ROWS`: at :data:`MAX_SCAN_TUPLES`
the scan stops before the rows that make up the graph's misses (recall@10 0.984 at
1,000,000 items against 0.994)."""
SCAN_MEMORY = 16
"""``hnsw.scan_mem_multiplier`` of a walk taking :data:`WALKED_ROWS`: the multiple of
``work_mem`` the iterative scan may hold (its candidates and the rows it has passed), a cap
per search (64 MB at the default ``work_mem`` of 4 MB). 16, 64 and 256 give the same recall
at 1,000,000 rows (docs/postgres.md)."""


def walked_rows_for(rows: float, nearest: int) -> int:
    """Rows taken from the walk for the ``nearest`` rows, in a table of about ``rows`` rows."""
    return nearest if 0 <= rows <= SMALL_TABLE else max(nearest, WALKED_ROWS)


EF_SEARCH_SHOWN = (
    f"ef_search={EF_SEARCH}, {WALKED_ROWS:,} rows walked"
    f" ({EF_SEARCH_SMALL}, limit + 16 rows to {SMALL_TABLE:,} rows)"
)
"""The search settings as status output shows them."""
MAX_SCAN_TUPLES = 20_000
"""How many index tuples an iterative scan visits at most (``hnsw.max_scan_tuples``) while
the tenancy filter rejects what it finds."""


def owners_index(name: str) -> str:
    """The index of ``<name>_items``' rows with vectors by agent and owner (whose statistics a
    row counts in, :func:`~prefrontal.stores.statistics_owner.owner_sql`): a tenant's rows (its
    own and the agent's shared ones) found without the HNSW walk, to score them all."""
    return f"""CREATE INDEX IF NOT EXISTS {name}_dense_owner
        ON {name}_items (agent_id, {owner_sql("scope", "user_id")}) WHERE dense IS NOT NULL"""


@dataclass(frozen=True)
class DenseColumn:
    """The ``dense`` column of a memory table: pgvector's schema, the type and its size."""

    extension_schema: str
    kind: str
    """``vector`` or ``halfvec``."""
    dimensions: int

    @property
    def sql_type(self) -> str:
        """The column's type, qualified: ``"public".vector(384)``."""
        return f'"{self.extension_schema}".{self.kind}({self.dimensions})'

    @property
    def distance(self) -> str:
        """pgvector's cosine distance operator, qualified."""
        return f'OPERATOR("{self.extension_schema}".<=>)'

    def describe(self) -> str:
        """How vector search runs, for status output: ``pgvector vector(384), hnsw``."""
        return f"pgvector {self.kind}({self.dimensions}), hnsw m={M} {EF_SEARCH_SHOWN}"


def kind_for(dimensions: int) -> str | None:
    """The pgvector type for vectors of ``dimensions`` (``None``: too large to index)."""
    if 0 < dimensions <= VECTOR_MAX:
        return "vector"
    if dimensions <= HALFVEC_MAX:
        return "halfvec"
    return None


def literal(embedding: Sequence[float] | None, dimensions: int) -> str | None:
    """``embedding`` as pgvector's text input (``None`` when absent or of another size).

    Each float's shortest ``repr`` reads back to the same float32.
    """
    if embedding is None or len(embedding) != dimensions:
        return None
    return "[" + ",".join(map(repr, embedding)) + "]"


_COLUMN = """
    SELECT format_type(a.atttypid, a.atttypmod), n.nspname
    FROM pg_attribute AS a
    JOIN pg_type AS t ON t.oid = a.atttypid
    JOIN pg_namespace AS n ON n.oid = t.typnamespace
    WHERE a.attrelid = to_regclass($1) AND a.attname = 'dense' AND NOT a.attisdropped"""


async def detect(connection: Any, name: str) -> DenseColumn | None:
    """The ``dense`` column of ``<name>_items`` when there is one (read only)."""
    row = await connection.fetchrow(_COLUMN, f"{name}_items")
    if row is None:
        return None
    shown, schema = row[0], row[1]
    kind, _, rest = shown.rpartition(".")[2].partition("(")
    return DenseColumn(schema, kind, int(rest.rstrip(")")))


async def set_up(connection: Any, name: str, dimensions: int) -> DenseColumn | str:
    """Give ``<name>_items`` its ``dense`` column and HNSW index, once; the column, or why not.

    Runs in a transaction of its own on ``connection`` (whose ``search_path``
    is the prefrontal schema), under the schema's migration lock: many
    processes starting at once set up once. Rows already there are filled
    from their embeddings (a rewrite of the table: minutes at millions of
    rows, an hour and more with the index); a log line ``pgvector_set_up``
    says how many before it starts, and the server's
    ``pg_stat_progress_create_index`` shows the index build as it goes. A
    column of another size is left alone (the reason says so).
    """
    kind = kind_for(dimensions)
    if kind is None:
        return f"{dimensions} dimensions: more than pgvector's HNSW index takes ({HALFVEC_MAX})"
    try:
        async with connection.transaction():
            schema = await connection.fetchval("SELECT current_schema()")
            await connection.execute(
                "SELECT pg_advisory_xact_lock(hashtext($1))", f"prefrontal-migrate:{schema}"
            )
            found = await detect(connection, name)
            if found is not None:
                if found.dimensions != dimensions or found.kind != kind:
                    return f"the column holds {found.kind}({found.dimensions}), not {kind}"
                if (
                    await connection.fetchval("SELECT to_regclass($1)", f"{name}_dense_owner")
                    is None
                ):
                    _log.info("pgvector_owner_index", table=f"{schema}.{name}_items")
                    await connection.execute(owners_index(name))
                return found
            extension = await _extension_schema(connection)
            if extension is None:
                return "the server has no pgvector extension"
            column = DenseColumn(extension, kind, dimensions)
            rows = await connection.fetchval(f"SELECT count(*) FROM {name}_items")
            _log.info(
                "pgvector_set_up",
                table=f"{schema}.{name}_items",
                rows=rows,
                index=f"hnsw m={M} ef_construction={EF_CONSTRUCTION}",
                progress="pg_stat_progress_create_index",
            )
            for statement in _statements(name, column, schema):
                await connection.execute(statement)
            return column
    except asyncpg.InsufficientPrivilegeError as error:
        return f"not allowed to set up pgvector: {error}"


async def _extension_schema(connection: Any) -> str | None:
    """The schema of the ``vector`` extension, created when missing (in ``public`` when
    there is one); ``None`` when the server does not offer it."""
    installed = await connection.fetchval(
        """SELECT n.nspname FROM pg_extension AS e
           JOIN pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"""
    )
    if installed is not None:
        return str(installed)
    available = await connection.fetchval(
        "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
    )
    if not available:
        return None
    public = await connection.fetchval("SELECT to_regnamespace('public') IS NOT NULL")
    await connection.execute(
        "CREATE EXTENSION IF NOT EXISTS vector" + (" SCHEMA public" if public else "")
    )
    return await _extension_schema(connection)


def _statements(name: str, column: DenseColumn, schema: str) -> tuple[str, ...]:
    """The column, its filling trigger, the rows already there, and the indexes (``schema``:
    prefrontal's, where they go)."""
    items, n = f"{name}_items", column.dimensions
    floats = f"""CREATE OR REPLACE FUNCTION {name}_dense_of(b bytea) RETURNS real[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $body$
        SELECT CASE WHEN length(b) <> {4 * n} THEN NULL ELSE ARRAY(
            SELECT CASE WHEN p.e = 0 THEN p.s * p.f * 2.0::float8 ^ -149
                        ELSE p.s * (8388608 + p.f) * 2.0::float8 ^ (p.e - 150) END::real
            FROM generate_series(0, {n - 1}) AS i,
            LATERAL (SELECT get_byte(b, 4 * i) | (get_byte(b, 4 * i + 1) << 8)
                        | (get_byte(b, 4 * i + 2) << 16)
                        | ((get_byte(b, 4 * i + 3) & 127) << 24) AS bits,
                        get_byte(b, 4 * i + 3) >> 7 AS sign) AS w,
            LATERAL (SELECT CASE WHEN w.sign = 1 THEN -1.0::float8 ELSE 1.0::float8 END AS s,
                        w.bits >> 23 AS e, w.bits & 8388607 AS f) AS p
            ORDER BY i) END
        $body$"""
    fill = f"""CREATE OR REPLACE FUNCTION {name}_dense_fill() RETURNS trigger
        LANGUAGE plpgsql SET search_path = "{schema}", "{column.extension_schema}" AS $body$
        BEGIN
            IF NEW.embedding IS NULL THEN
                NEW.dense := NULL;
            ELSIF NEW.dense IS NULL OR (TG_OP = 'UPDATE'
                    AND NEW.embedding IS DISTINCT FROM OLD.embedding
                    AND NEW.dense IS NOT DISTINCT FROM OLD.dense) THEN
                NEW.dense := {name}_dense_of(NEW.embedding)::{column.sql_type};
            END IF;
            RETURN NEW;
        END
        $body$"""
    ops = f'"{column.extension_schema}".{column.kind}_cosine_ops'
    return (
        f"ALTER TABLE {items} ADD COLUMN dense {column.sql_type}",
        f"ALTER TABLE {items} ALTER COLUMN dense SET STORAGE MAIN",
        f"ALTER TABLE {items} ALTER COLUMN embedding SET STORAGE EXTERNAL",
        floats,
        fill,
        f"""CREATE TRIGGER {name}_dense_fill BEFORE INSERT OR UPDATE OF embedding, dense
            ON {items} FOR EACH ROW EXECUTE FUNCTION {name}_dense_fill()""",
        f"""UPDATE {items} SET dense = {name}_dense_of(embedding)::{column.sql_type}
            WHERE embedding IS NOT NULL AND length(embedding) = {4 * n}""",
        f"""CREATE INDEX {name}_dense ON {items} USING hnsw (dense {ops})
            WITH (m = {M}, ef_construction = {EF_CONSTRUCTION})""",
        owners_index(name),
    )
