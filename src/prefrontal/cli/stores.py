"""Which stores a command runs on: ``--db PATH`` (SQLite), a PostgreSQL URL, or ``:memory:``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import typer
from rich.console import Console

from prefrontal.stores.set import Stores

DEFAULT_DB = Path(".prefrontal") / "prefrontal.db"
MEMORY = ":memory:"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")

DbOption = typer.Option(
    str(DEFAULT_DB),
    "--db",
    envvar="PREFRONTAL_DB",
    help=(
        "SQLite database file (created on first use), a PostgreSQL URL "
        "(postgresql://user@host/db), or ':memory:'."
    ),
)


def build(db: str, err: Console) -> Stores:
    """The stores for ``db``: in memory, PostgreSQL for a URL, else a SQLite file.

    Without SQLite in this build, a path gets in-memory stores with a note.
    """
    if db == MEMORY:
        return Stores.in_memory()
    if db.startswith(POSTGRES_SCHEMES):
        return Stores.postgres(db)
    sqlite = getattr(Stores, "sqlite", None)
    if sqlite is None:
        err.print(
            f"note: SQLite stores are not available in this build; using in-memory stores "
            f"instead of {db} (nothing is kept after the command)."
        )
        return Stores.in_memory()
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    stores: Stores = sqlite(db)
    return stores


@asynccontextmanager
async def opened(db: str, err: Console) -> AsyncIterator[Stores]:
    """The stores for ``db``, closed on exit."""
    stores = build(db, err)
    try:
        yield stores
    finally:
        await stores.aclose()
