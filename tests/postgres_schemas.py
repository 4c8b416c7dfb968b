"""A PostgreSQL schema at an older version, for the upgrade tests.

An upgrade test migrates a fresh schema to the version before a change,
writes rows as that version kept them, opens the stores (which migrate it
to the latest) and checks what they read: :func:`schema_at` gives the
connection at the old version, :func:`schema_version` the version after.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from prefrontal.stores.postgres import migrations


def _settings(schema: str) -> dict[str, str]:
    return {"search_path": f'"{schema}"'}


@asynccontextmanager
async def schema_at(dsn: str, schema: str, version: int) -> AsyncIterator[asyncpg.Connection]:
    """A connection whose search path is ``schema``, migrated to ``version`` (the first
    ``version`` migrations; it must be a fresh schema or one below it); closed at exit."""
    connection = await asyncpg.connect(dsn, server_settings=_settings(schema))
    try:
        applied = await migrations.migrate(connection, schema, migrations.MIGRATIONS[:version])
        assert applied == version, f"schema {schema} at {applied}, not {version}"
        yield connection
    finally:
        await connection.close()


async def schema_version(dsn: str, schema: str) -> int:
    """The version ``schema`` is at now (read on a connection of its own)."""
    connection = await asyncpg.connect(dsn, server_settings=_settings(schema))
    try:
        return await migrations.schema_version(connection)
    finally:
        await connection.close()
