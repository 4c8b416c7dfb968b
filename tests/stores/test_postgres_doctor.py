"""``prefrontal doctor`` on real servers: pgvector or the cache, the index, replicas and lag.

Sync tests: the command runs its own event loop (``anyio.run``), as it does
from a shell; the stores it looks at are set up the same way first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import pytest
from typer.testing import CliRunner

from prefrontal.cli.app import app
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import postgres
from tests.postgres_server import Server, running_replica


def _opened(dsn: str, schema: str, *, dense: bool = True) -> None:
    """Open (and so create and set up) the stores of ``schema``, then close them."""

    async def run() -> None:
        stores = postgres.open_stores(
            dsn, schema=schema, embedder=HashingEmbedder(32), max_size=2, dense=dense
        )
        await stores.open()
        await stores.aclose()

    anyio.run(run)


def _sql(dsn: str, statement: str) -> None:
    async def run() -> None:
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    anyio.run(run)


def _doctor(*arguments: str) -> tuple[int, dict[str, Any]]:
    """``prefrontal doctor ARGUMENTS --json``: the exit code and the diagnosis."""
    result = CliRunner().invoke(app, ["doctor", *arguments, "--json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def replica(pgvector_server: Server, pgvector_dsn: str) -> Iterator[Server]:
    """A hot standby of the pgvector server for the module (its database created first)."""
    with running_replica(pgvector_server) as standby:
        yield standby


def _on(server: Server, dsn: str) -> str:
    """``dsn``'s database on ``server``'s socket."""
    return server.dsn(dsn.split("/", 3)[3].split("?", 1)[0])


def test_pgvector_in_use_is_reported_with_its_index_and_nothing_to_do(pgvector_dsn: str) -> None:
    """With the extension and the stores set up, both tables search by pgvector's HNSW index."""
    _opened(pgvector_dsn, "doctor_ok")
    code, found = _doctor("--db", pgvector_dsn, "--schema", "doctor_ok")
    assert found["extension"].startswith("vector 0.8")
    tables = {table["store"]: table for table in found["tables"]}
    assert tables["episodic"]["vector_search"] == "pgvector"
    assert tables["episodic"]["column"] == "vector(32)"
    assert "hnsw m=16 ef_construction=128" in tables["episodic"]["index"]
    assert found["advice"] == [] and code == 0


def test_a_missing_index_is_found_and_the_fix_named(pgvector_dsn: str) -> None:
    """A pgvector column without its HNSW index is reported with what to do; exit status 1."""
    _opened(pgvector_dsn, "doctor_noindex")
    _sql(pgvector_dsn, "DROP INDEX doctor_noindex.episodic_dense")
    code, found = _doctor("--db", pgvector_dsn, "--schema", "doctor_noindex")
    tables = {table["store"]: table for table in found["tables"]}
    assert tables["episodic"]["vector_search"] == "pgvector, no index"
    assert tables["semantic"]["vector_search"] == "pgvector"
    assert any("no index episodic_dense" in advice for advice in found["advice"])
    assert code == 1


def test_an_offered_extension_not_installed_says_who_may_create_it(
    pgvector_server: Server,
) -> None:
    """A database where ``vector`` is offered but not created: the cache, and the rights asked."""
    dsn = pgvector_server.create_database("doctor_bare")
    _opened(dsn, "doctor_cache", dense=False)
    code, found = _doctor("--db", dsn, "--schema", "doctor_cache")
    assert found["extension"].startswith("offered (")
    assert {table["vector_search"] for table in found["tables"]} == {"process cache"}
    assert any("CREATE EXTENSION vector" in advice for advice in found["advice"])
    assert any("rds_superuser" in advice for advice in found["advice"])
    assert code == 1


def test_a_server_without_pgvector_keeps_the_cache(postgres_dsn: str) -> None:
    """On the plain server the extension is not offered: the process cache, and how to change it."""
    _opened(postgres_dsn, "doctor_plain")
    code, found = _doctor("--db", postgres_dsn, "--schema", "doctor_plain")
    assert found["extension"] == "not offered"
    assert {table["vector_search"] for table in found["tables"]} == {"process cache"}
    assert any("Install pgvector" in advice for advice in found["advice"]) and code == 1


def test_a_missing_schema_is_said_and_not_created(pgvector_dsn: str) -> None:
    """A schema no process opened yet is reported as such, and the doctor does not create it."""
    code, found = _doctor("--db", pgvector_dsn, "--schema", "doctor_never")
    assert found["tables"] == [] and code == 1
    assert any("does not exist yet" in advice for advice in found["advice"])
    _, again = _doctor("--db", pgvector_dsn, "--schema", "doctor_never")
    assert any("does not exist yet" in advice for advice in again["advice"])


def test_a_streaming_replica_and_its_lag_are_reported(
    pgvector_dsn: str, pgvector_server: Server, replica: Server
) -> None:
    """The primary lists its streaming replica; the read DSN is a replica with the schema, its
    staleness under a second; nothing to do."""
    _opened(pgvector_dsn, "doctor_replicated")
    read = _on(replica, pgvector_dsn)
    for _ in range(200):
        code, found = _doctor(
            "--db", pgvector_dsn, "--schema", "doctor_replicated", "--read-dsn", read
        )
        if found["replicas"][-1]["has_schema"]:
            break
        anyio.run(anyio.sleep, 0.05)
    streamed, named = found["replicas"][0], found["replicas"][-1]
    assert len(found["replicas"]) == 2
    assert streamed["state"].startswith("streaming")
    assert named["state"] == "replica" and named["has_schema"] is True
    assert 0 <= named["lag_s"] < 1.0
    assert found["advice"] == [] and code == 0


def test_a_read_dsn_naming_a_primary_or_nothing_is_flagged(
    pgvector_dsn: str, tmp_path: Path
) -> None:
    """A read DSN that is a primary, or that cannot be reached, comes with advice."""
    _opened(pgvector_dsn, "doctor_wrong")
    unreachable = f"postgresql://postgres@/nothing?host={tmp_path}"
    code, found = _doctor(
        "--db", pgvector_dsn, "--schema", "doctor_wrong",
        "--read-dsn", pgvector_dsn, "--read-dsn", unreachable,
    )  # fmt: skip
    states = [replica["state"] for replica in found["replicas"][-2:]]
    assert states[0] == "not a replica (a primary)"
    assert states[1].startswith("unreachable")
    assert len(found["advice"]) == 2 and code == 1


def test_sqlite_and_memory_need_no_pgvector(tmp_path: Path) -> None:
    """On SQLite and in memory the doctor says searches use the process's own vectors."""
    for db in (str(tmp_path / "p.db"), ":memory:"):
        code, found = _doctor("--db", db)
        assert "own vectors" in found["vector_search"] and code == 0


def test_text_output_names_the_search_and_the_advice(postgres_dsn: str) -> None:
    """Without ``--json`` the doctor prints a line per finding and a ``to do:`` line per advice."""
    _opened(postgres_dsn, "doctor_text")
    result = CliRunner().invoke(app, ["doctor", "--db", postgres_dsn, "--schema", "doctor_text"])
    assert result.exit_code == 1
    assert "pgvector: not offered" in result.stdout
    assert "episodic: process cache" in result.stdout
    assert "to do: This server has no pgvector" in result.stdout


def test_an_unreachable_primary_exits_with_status_2(tmp_path: Path) -> None:
    """A primary that cannot be reached: exit status 2 and one line saying so."""
    result = CliRunner().invoke(
        app, ["doctor", "--db", f"postgresql://postgres@/nothing?host={tmp_path}"]
    )
    assert result.exit_code == 2
    assert "cannot reach" in result.output
