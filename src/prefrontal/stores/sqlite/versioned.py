"""Compare-and-set on SQLite: checked inside the write transaction (``BEGIN IMMEDIATE``)."""

from __future__ import annotations

import sqlite3

from pydantic import BaseModel

from prefrontal.stores.durable import read_one
from prefrontal.stores.versioned import check_stored


class _Versioned(BaseModel):
    """The version of a stored body; its other fields are ignored."""

    version: int = 1


def check_version(
    connection: sqlite3.Connection,
    *,
    table: str,
    key: tuple[str, ...],
    expected_version: int | None,
    what: str,
    store: str,
) -> None:
    """``ConflictError`` unless the row of ``key`` is at ``expected_version`` (``None``: no row).

    Call it inside a write transaction: SQLite's single writer keeps the row
    as read until the transaction's own write.
    """
    where = "agent_id = ?" if len(key) == 1 else "agent_id = ? AND item_id = ? AND user_id = ?"
    row = connection.execute(f"SELECT body FROM {table} WHERE {where}", key).fetchone()
    stored = None if row is None else read_one(row[0], _Versioned.model_validate_json, store=store)
    check_stored(
        None if stored is None else stored.version, expected_version, what=what, store=store
    )
