"""Which stores a command runs on: ``--db PATH`` (SQLite), a PostgreSQL URL, or ``:memory:``.

``--db`` is read strictly: ``postgresql://`` and ``postgres://`` name a
PostgreSQL database, any other ``scheme://`` is an error (never a file name,
so a DSN's password never lands on disk as a directory), anything else is a
SQLite file. Commands that only read (``trace list``, ``trace show``) open
an existing file and never create one. With a PostgreSQL URL,
``PREFRONTAL_READ_DSNS`` (URLs separated by spaces) names read replicas for
the memory searches (``open_stores(read_dsns=...)``).
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import typer

from prefrontal.cli.errors import innermost, one_line
from prefrontal.errors import ConfigurationError, StoreError
from prefrontal.files import private_directory
from prefrontal.stores import sqlite
from prefrontal.stores.set import Stores

DEFAULT_DB = Path(".prefrontal") / "prefrontal.db"
MEMORY = ":memory:"
POSTGRES_SCHEMES = ("postgresql", "postgres")
SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
READ_DSNS_ENV = "PREFRONTAL_READ_DSNS"
"""The read replicas' URLs, separated by spaces, for a PostgreSQL ``--db``."""
PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:@/]*):[^@/]*@")

DbOption = typer.Option(
    str(DEFAULT_DB),
    "--db",
    envvar="PREFRONTAL_DB",
    help=(
        "SQLite database file (created on first use), a PostgreSQL URL "
        "(postgresql://user@host/db), or ':memory:'."
    ),
)


def build(db: str, *, create: bool = True) -> Stores:
    """The stores for ``db``: in memory, PostgreSQL for a URL, else a SQLite file.

    ``ConfigurationError`` for a URL of another scheme, and, with
    ``create=False``, for a SQLite file that does not exist.
    """
    if db == MEMORY:
        return Stores.in_memory()
    scheme = SCHEME.match(db)
    if scheme is not None:
        if scheme.group(1).lower() in POSTGRES_SCHEMES:
            from prefrontal.stores import postgres  # asyncpg: only when asked for

            return postgres.open_stores(db, read_dsns=os.environ.get(READ_DSNS_ENV, "").split())
        raise ConfigurationError(
            f"--db: unknown scheme {scheme.group(1)!r}; use postgresql://user@host/db, "
            "a SQLite file path, or :memory:"
        )
    path = Path(db)
    if not create and not path.is_file():
        raise ConfigurationError(f"--db: no database at {db}")
    if create:
        _make_parent(path)
    return sqlite.open_stores(path)


def _make_parent(path: Path) -> None:
    """Create the directory that will hold ``path``, or say in one line why it cannot be."""
    try:
        private_directory(path.parent)
    except OSError as error:
        reason = "a file is in the way" if isinstance(error, FileExistsError) else error.strerror
        raise ConfigurationError(f"--db: cannot create {path.parent}: {reason}") from error


@asynccontextmanager
async def opened(db: str, *, create: bool = True) -> AsyncIterator[Stores]:
    """The stores for ``db``, closed on exit (see :func:`build` for ``create``).

    A store error that escapes the command (a corrupt or unreadable file, a
    read-only directory, a server that refuses) is re-raised as a
    ``ConfigurationError`` that names the database, without its password.
    """
    stores = build(db, create=create)
    try:
        yield stores
    except Exception as error:
        failure = innermost(error)
        if isinstance(failure, StoreError):
            raise ConfigurationError(f"--db {shown(db)}: {one_line(failure)}") from error
        raise
    finally:
        await stores.aclose()


def shown(db: str) -> str:
    """``db`` as it may be printed: a URL's password replaced by ``***``."""
    return PASSWORD.sub(r"\1:***@", db)
