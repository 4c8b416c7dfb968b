"""What the durable backends (SQLite, PostgreSQL) share: record bodies, storable text, schema steps.

Each backend keeps its own SQL, driver and error mapping; these pieces hold
for both and live here once.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from prefrontal.errors import ItemRejectedError

MEMORY_TABLES = ("episodic", "semantic")
"""The memory stores' names; each has its own tables, so its own BM25 statistics."""


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
