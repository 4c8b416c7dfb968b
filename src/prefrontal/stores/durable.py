"""What the durable backends (SQLite, PostgreSQL) share: record bodies, storable text, schema steps.

Each backend keeps its own SQL, driver and error mapping; these pieces hold
for both and live here once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Generic, Protocol, TypeVar, runtime_checkable

import structlog
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from prefrontal.errors import ConfigurationError, ItemRejectedError, StoreError

_log = structlog.get_logger("prefrontal.stores")
RowT = TypeVar("RowT")
ModelT = TypeVar("ModelT")

MEMORY_TABLES = ("episodic", "semantic")
"""The memory stores' names; each has its own tables, so its own BM25 statistics."""


def memory_table(name: str) -> str:
    """``name`` when it names a memory store's tables, else a ``ConfigurationError``."""
    if name not in MEMORY_TABLES:
        raise ConfigurationError(f"memory store name must be one of {MEMORY_TABLES}")
    return name


class Closable(Protocol):
    """What a shared database offers its stores here: a way to close it."""

    async def aclose(self) -> None: ...


DatabaseT = TypeVar("DatabaseT", bound=Closable)


class Committed(Protocol):
    """A transaction shared by several writes: ``committed`` once it has committed."""

    committed: bool


Batch = Callable[[], AbstractAsyncContextManager[Committed]]
"""Opens a block whose writes share one transaction (``Database.batch`` of SQLite)."""


@runtime_checkable
class ExpectsWrites(Protocol):
    """A shared transaction told how many writes its block makes, so that it commits with the
    last of them (SQLite's :class:`~prefrontal.stores.sqlite.database.WriteBatch`)."""

    def expect_writes(self, count: int) -> None:
        """The block makes ``count`` writes (one for each of its calls, a retry of one that
        failed counting as it): the transaction commits once ``count`` of them have
        succeeded, as the last returns. A write after that is a transaction of its own."""
        ...


@runtime_checkable
class Batching(Protocol):
    """A database whose writes can share a transaction (SQLite's
    :class:`~prefrontal.stores.sqlite.Database`)."""

    def batch(self, *, synced: bool = True) -> AbstractAsyncContextManager[Committed]:
        """A block whose writes share one transaction, synced at its commit unless told not."""
        ...

    def in_batch(self) -> bool:
        """Whether the calling task is inside a :meth:`batch` block of this database."""
        ...


def batching_database(backends: Iterable[object]) -> Batching | None:
    """The one database every backend in ``backends`` is on (its ``database``
    attribute), when it can batch writes; ``None`` when the backends are on
    different databases, on none (in memory), or on one that cannot batch."""
    databases = {id(d): d for d in (getattr(b, "database", None) for b in backends)}
    if len(databases) != 1:
        return None
    (database,) = databases.values()
    return database if isinstance(database, Batching) else None


def shared_batch(backends: Iterable[object], *, synced: bool = True) -> Batch | None:
    """The ``batch`` of the one database every backend in ``backends`` is on, if it has one.

    ``None`` when :func:`batching_database` finds none: then each write is
    its own transaction. ``synced=False``: its transactions commit without a
    sync of their own (``batch(synced=False)``; SQLite's
    :meth:`~prefrontal.stores.sqlite.Database.batch` says what survives what).
    """
    database = batching_database(backends)
    if database is None:
        return None
    return database.batch if synced else partial(database.batch, synced=False)


class SharesDatabase(Generic[DatabaseT]):
    """A store on a database that every store of its set shares.

    Closing one store closes the database for all of them; the database's
    ``aclose`` is called once per store and does nothing after the first.
    """

    def __init__(self, database: DatabaseT) -> None:
        self.database = database

    async def open(self) -> None:
        """Open the shared database ahead of the first call, when it can be (its ``open()``);
        once is enough for every store of the set, and later calls cost little."""
        opener = getattr(self.database, "open", None)
        if opener is not None:
            await opener()

    async def aclose(self) -> None:
        """Close the database this store shares with the others."""
        await self.database.aclose()


@dataclass(frozen=True)
class Migration:
    """One step forward: the statements that take the schema to ``version``.

    ``reanalyse`` is set when the text analyser changed: after the statements,
    in the same transaction, every memory item whose stored record is not all
    ASCII has its index terms analysed anew (ASCII text analyses as before).
    """

    version: int
    description: str
    statements: tuple[str, ...]
    reanalyse: bool = False


@contextmanager
def upgrading(database: str | None, current: int, migration: Migration) -> Iterator[None]:
    """Log a migration step that upgrades ``database``: its start, then its end.

    A step over data can take a while on the first open after an upgrade (a
    statistics rebuild is seconds at 100,000 items); the two lines say what
    is happening and how long it took. ``database`` is ``None`` while a
    database is being created: nothing is there to wait for, and nothing is
    logged.
    """
    if database is None:
        yield
        return
    started = time.perf_counter()
    fields = {
        "database": database,
        "version": migration.version,
        "description": migration.description,
    }
    _log.info("schema_upgrade_started", from_version=current, **fields)
    yield
    _log.info("schema_upgraded", seconds=round(time.perf_counter() - started, 3), **fields)


def dump(model: BaseModel, *, store: str, exclude: set[str] | None = None) -> str:
    """``model`` as JSON; text that is not valid UTF-8 is an :class:`ItemRejectedError`.

    ``model_dump_json(exclude=exclude)``'s text, from the model's serializer called
    directly (that method passes each of its many options on, a cost per item a bulk
    load pays).
    """
    try:
        return type(model).__pydantic_serializer__.to_json(model, exclude=exclude).decode()
    except PydanticSerializationError as error:
        raise ItemRejectedError(
            f"cannot store {type(model).__name__}: {error}", store=store
        ) from error


def encodable(text: str) -> bool:
    """True when ``text`` is valid UTF-8 (no lone surrogates): nothing else is ever stored."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def readable(rows: Iterable[RowT], decode: Callable[[RowT], ModelT], *, store: str) -> list[ModelT]:
    """Each row decoded; a row that cannot be (a bad value, broken JSON) is skipped and logged.

    One unreadable row must not fail every read that would have returned it
    beside the others: a search, a transcript, a list of goals.
    """
    decoded: list[ModelT] = []
    for row in rows:
        try:
            decoded.append(decode(row))
        except ValueError as error:
            _log.warning("unreadable_row_skipped", store=store, error=_first_line(error))
    return decoded


def read_one(body: RowT, decode: Callable[[RowT], ModelT], *, store: str) -> ModelT:
    """``decode(body)``, or a :class:`StoreError` that says the stored record cannot be read."""
    try:
        return decode(body)
    except ValueError as error:
        raise StoreError(
            f"a stored record cannot be read: {_first_line(error)}", store=store
        ) from error


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return " ".join(lines[:3]) if lines else type(error).__name__
