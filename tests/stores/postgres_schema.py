"""Taking a PostgreSQL schema built by this prefrontal back to an older version, for migration tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from prefrontal.stores.durable import MEMORY_TABLES
from prefrontal.stores.postgres.migrations import _bounds_index_function, _index_function


@asynccontextmanager
async def schema_connection(dsn: str, schema: str) -> AsyncIterator[Any]:
    """A connection whose ``search_path`` is ``schema``, closed after the block."""
    connection = await asyncpg.connect(dsn, server_settings={"search_path": schema})
    try:
        yield connection
    finally:
        await connection.close()


async def to_schema_3(connection: Any) -> None:
    """Undo schemas 6 to 4: the BM25 statistics global again, counted from the items.

    Delete the ledger's versions above 3 (or lower) and opening the stores
    runs migration 4 again. ``connection``'s ``search_path`` is the schema.
    """
    await to_schema_5(connection)
    for name in MEMORY_TABLES:
        items = f"{name}_items"
        await connection.execute(f"DROP TABLE {name}_agent_stats")
        await connection.execute(f"DROP TABLE {name}_terms")
        await connection.execute(f"DROP FUNCTION {name}_index() CASCADE")
        await connection.execute(
            f"""CREATE TABLE {name}_stats (
                id integer PRIMARY KEY CHECK (id = 0),
                docs bigint NOT NULL,
                tokens bigint NOT NULL
            )"""
        )
        await connection.execute(
            f"""INSERT INTO {name}_stats (id, docs, tokens)
                SELECT 0, count(*), coalesce(sum(length), 0) FROM {items}"""
        )
        await connection.execute(
            f"CREATE TABLE {name}_terms (term text PRIMARY KEY, df bigint NOT NULL)"
        )
        await connection.execute(
            f"""INSERT INTO {name}_terms (term, df)
                SELECT t, count(*) FROM {items}, unnest(terms) AS t GROUP BY t"""
        )
        await connection.execute(_index_function(name))
        await connection.execute(
            f"""CREATE TRIGGER {name}_index
                AFTER INSERT OR DELETE OR UPDATE OF terms, length ON {items}
                FOR EACH ROW EXECUTE FUNCTION {name}_index()"""
        )


async def to_schema_11(connection: Any) -> None:
    """Undo schema 12: term statistics per agent again, counted from the items.

    Delete the ledger's versions above 11 and opening the stores runs
    migration 12 again.
    """
    for name in MEMORY_TABLES:
        items, vocab = f"{name}_items", f"{name}_terms"
        await connection.execute(f"DROP TABLE {name}_owner_stats")
        await connection.execute(f"DROP TABLE {vocab}")
        await connection.execute(
            f"""CREATE TABLE {vocab} (
                agent_id text NOT NULL,
                term text NOT NULL,
                df bigint NOT NULL,
                max_tf integer NOT NULL DEFAULT 1,
                min_length_1 integer,
                min_length_2 integer,
                min_length_3 integer,
                PRIMARY KEY (agent_id, term)
            )"""
        )
        await connection.execute(
            f"""INSERT INTO {vocab} (agent_id, term, df, max_tf, min_length_1, min_length_2,
                    min_length_3)
                SELECT m.agent_id, u.t, count(*), max(u.c),
                    min(CASE u.c WHEN 1 THEN m.length END),
                    min(CASE u.c WHEN 2 THEN m.length END),
                    min(CASE WHEN u.c >= 3 THEN m.length END)
                FROM {items} AS m, unnest(m.terms, m.counts) AS u(t, c)
                GROUP BY m.agent_id, u.t"""
        )
        await connection.execute(_bounds_index_function(name, drop_empty=True, bulk=True))
        await connection.execute(f"DROP TRIGGER {name}_index ON {items}")
        await connection.execute(
            f"""CREATE TRIGGER {name}_index
                AFTER INSERT OR DELETE OR UPDATE OF terms, length ON {items}
                FOR EACH ROW EXECUTE FUNCTION {name}_index()"""
        )


async def to_schema_10(connection: Any) -> None:
    """Undo schemas 12 and 11: no slots, change stamps nor deletion log.

    Delete the ledger's versions above 10 and opening the stores runs
    migration 11 again.
    """
    await to_schema_11(connection)
    for name in MEMORY_TABLES:
        items = f"{name}_items"
        await connection.execute(f"DROP TRIGGER {name}_log_gone ON {items}")
        await connection.execute(f"DROP TRIGGER {name}_stamp ON {items}")
        await connection.execute(f"DROP FUNCTION {name}_log_gone, {name}_stamp")
        await connection.execute(f"DROP TABLE {name}_gone, {name}_gone_horizon")
        await connection.execute(f"ALTER TABLE {items} DROP COLUMN slot, DROP COLUMN changed")


async def to_schema_8(connection: Any) -> None:
    """Undo schemas 11 and 9: the terms and impact tokens GIN-indexed as they are, for everyone.

    Delete the ledger's versions above 8 and opening the stores runs
    migration 9 again.
    """
    await to_schema_10(connection)
    for name in MEMORY_TABLES:
        items = f"{name}_items"
        await connection.execute(f"ALTER TABLE {items} DROP COLUMN visible")
        await connection.execute(f"CREATE INDEX {name}_by_terms ON {items} USING gin (terms)")
        await connection.execute(f"CREATE INDEX {name}_by_impacts ON {items} USING gin (impacts)")
    await connection.execute("DROP FUNCTION memory_visible_keys")
    await connection.execute("DROP FUNCTION memory_search_keys")


async def to_schema_5(connection: Any) -> None:
    """Undo schemas 9 to 6: no impact column, nor its index.

    Delete the ledger's versions above 5 and opening the stores runs
    migration 6 again.
    """
    await to_schema_8(connection)
    for name in MEMORY_TABLES:
        await connection.execute(f"ALTER TABLE {name}_items DROP COLUMN impacts")
