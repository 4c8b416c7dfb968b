"""``prefrontal doctor --db URL [--read-dsn URL ...] [--json]``: what vector search runs on.

On PostgreSQL, reads (and changes nothing) what
:func:`prefrontal.stores.postgres.doctor.diagnose` reports: the server and
its pgvector extension, for each memory table whether hybrid searches use
pgvector (its column and HNSW index) or each process's vector cache, the
replicas and their lag, and what to do. On SQLite and in memory, says that
searches use the process's own vectors. Exits 0 when there is no advice, 1
when there is, 2 when the database cannot be reached.
"""

from __future__ import annotations

import json
from typing import Annotated

import anyio
import typer

from prefrontal.cli.stores import POSTGRES_SCHEMES, SCHEME, DbOption, shown
from prefrontal.errors import ConfigurationError


def _local(db: str) -> dict[str, object]:
    """The answer for SQLite and in-memory stores: no pgvector to diagnose."""
    where = "in memory" if db == ":memory:" else "SQLite"
    return {
        "database": where,
        "vector_search": "the process's own vectors (SQLite: memory-mapped vector files)",
        "advice": [],
    }


def _lines(found: dict[str, object]) -> list[str]:
    """The diagnosis as lines of text."""
    if "server_version" not in found:
        return [f"database: {found['database']}", f"vector search: {found['vector_search']}"]
    lines = [
        f"server: PostgreSQL {found['server_version']}, schema {found['schema']}",
        f"pgvector: {found['extension']}",
    ]
    for table in found["tables"]:  # type: ignore[attr-defined]
        parts = [f"{table['store']}: {table['vector_search']}", f"{table['rows']:,} rows"]
        parts += [value for value in (table["column"], table["index"]) if value]
        lines.append(", ".join(parts))
    for replica in found["replicas"]:  # type: ignore[attr-defined]
        lag = "" if replica["lag_s"] is None else f", lag {replica['lag_s']:.3f} s"
        lines.append(f"replica {replica['name']}: {replica['state']}{lag}")
    if not found["replicas"]:
        lines.append("replicas: none")
    return lines


async def _diagnose(
    db: str, schema: str, read_dsns: list[str], max_staleness: float
) -> dict[str, object]:
    from prefrontal.stores.postgres.doctor import diagnose  # asyncpg: only when asked for

    found = await diagnose(db, schema=schema, read_dsns=read_dsns, max_staleness=max_staleness)
    return found.as_dict()


def doctor(
    db: str = DbOption,
    read_dsn: Annotated[
        list[str] | None,
        typer.Option("--read-dsn", help="A read replica's URL, as given to the servers (repeat)."),
    ] = None,
    schema: str = typer.Option("prefrontal", "--schema", help="The PostgreSQL schema."),
    max_staleness: float = typer.Option(
        5.0, "--max-staleness", help="Seconds a replica may lag before searches skip it."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the diagnosis as JSON."),
) -> None:
    """Say what vector search runs on (pgvector or the cache), the index, replicas and lag.

    Then what to do, one line each: exit status 1 when there is something.
    """
    scheme = SCHEME.match(db)
    if scheme is None or scheme.group(1).lower() not in POSTGRES_SCHEMES:
        if scheme is not None:
            raise ConfigurationError(f"--db: unknown scheme {scheme.group(1)!r}")
        found = _local(db)
    else:
        try:
            found = anyio.run(_diagnose, db, schema, read_dsn or [], max_staleness)
        except (OSError, TimeoutError, ConnectionError) as error:
            typer.echo(f"cannot reach {shown(db)}: {error}", err=True)
            raise typer.Exit(2) from None
    advice: list[str] = found["advice"]  # type: ignore[assignment]
    if as_json:
        typer.echo(json.dumps(found, indent=2))
    else:
        for line in _lines(found):
            typer.echo(line)
        for sentence in advice:
            typer.echo(f"to do: {sentence}")
        if not advice:
            typer.echo("nothing to do")
    if advice:
        raise typer.Exit(1)
