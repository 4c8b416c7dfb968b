"""What the durable backends (SQLite, PostgreSQL) share: record bodies, storable text, schema steps.

Each backend keeps its own SQL, driver and error mapping; these pieces hold
for both and live here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from prefrontal.errors import ConfigurationError, ItemRejectedError

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


class SharesDatabase(Generic[DatabaseT]):
    """A store on a database that every store of its set shares.

    Closing one store closes the database for all of them; the database's
    ``aclose`` is called once per store and does nothing after the first.
    """

    def __init__(self, database: DatabaseT) -> None:
        self.database = database

    async def aclose(self) -> None:
        """Close the database this store shares with the others."""
        await self.database.aclose()


@dataclass(frozen=True)
class Migration:
    """One step forward: the statements that take the schema to ``version``."""

    version: int
    description: str
    statements: tuple[str, ...]


def dump(model: BaseModel, *, store: str, exclude: set[str] | None = None) -> str:
    """``model`` as JSON; text that is not valid UTF-8 is an :class:`ItemRejectedError`."""
    try:
        return model.model_dump_json(exclude=exclude)
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
