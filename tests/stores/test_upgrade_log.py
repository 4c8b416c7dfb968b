"""Upgrading an existing database says so: each step's start, then its end with how long it took."""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from prefrontal.stores import MemoryItem, MemoryQuery, Tenant, postgres, sqlite
from prefrontal.stores.postgres import migrations as pg_migrations
from prefrontal.stores.sqlite import migrations as sqlite_migrations
from prefrontal.stores.sqlite.driver import sqlite3
from tests.conftest import FIXED_NOW
from tests.stores.postgres_schema import schema_connection, to_schema_3
from tests.stores.sqlite_schema import to_schema_4

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
EVENTS = ("schema_upgrade_started", "schema_upgraded")


def notes() -> list[MemoryItem]:
    return [
        MemoryItem(
            item_id=f"n{n}",
            agent_id="agent-1",
            user_id="alice",
            content=f"note {n}: the payment review",
            created_at=FIXED_NOW,
        )
        for n in range(3)
    ]


def upgrade_lines(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [entry for entry in logs if entry["event"] in EVENTS]


def assert_steps(
    lines: list[MutableMapping[str, Any]], first: int, last: int, database: str
) -> None:
    """Each version from ``first`` to ``last`` started then ended, in order, on ``database``."""
    versions = list(range(first, last + 1))
    assert [(e["event"], e["version"]) for e in lines] == [
        (event, version) for version in versions for event in EVENTS
    ]
    started = [e for e in lines if e["event"] == "schema_upgrade_started"]
    assert [e["from_version"] for e in started] == [v - 1 for v in versions]
    ended = [e for e in lines if e["event"] == "schema_upgraded"]
    assert all(e["seconds"] >= 0 and e["description"] for e in ended)
    assert all(e["log_level"] == "info" and e["database"] == database for e in lines)


async def test_sqlite_logs_an_upgrade_and_nothing_when_creating(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with capture_logs() as created:
        stores = sqlite.open_stores(path)
        await stores.episodic.put_many(notes())
        await stores.aclose()
    assert upgrade_lines(created) == []

    connection = sqlite3.connect(path, isolation_level=None)
    to_schema_4(connection)
    connection.execute("PRAGMA user_version = 4")
    connection.close()
    with capture_logs() as upgraded:
        stores = sqlite.open_stores(path)
        hits = await stores.episodic.search(ALICE, MemoryQuery(text="payment", now=FIXED_NOW))
        await stores.aclose()
    assert len(hits) == 3
    assert_steps(upgrade_lines(upgraded), 5, sqlite_migrations.LATEST, str(path))

    with capture_logs() as reopened:
        stores = sqlite.open_stores(path)
        await stores.episodic.search(ALICE, MemoryQuery(text="payment", now=FIXED_NOW))
        await stores.aclose()
    assert upgrade_lines(reopened) == []


async def test_postgres_logs_an_upgrade_and_nothing_when_creating(
    postgres_dsn: str, postgres_schema: str
) -> None:
    with capture_logs() as created:
        stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
        await stores.episodic.put_many(notes())
        await stores.aclose()
    assert upgrade_lines(created) == []

    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        await to_schema_3(connection)
        await connection.execute("DELETE FROM schema_migrations WHERE version > 3")
    with capture_logs() as upgraded:
        stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
        hits = await stores.episodic.search(ALICE, MemoryQuery(text="payment", now=FIXED_NOW))
        await stores.aclose()
    assert len(hits) == 3
    database = f"postgresql schema {postgres_schema}"
    assert_steps(upgrade_lines(upgraded), 4, pg_migrations.LATEST, database)
