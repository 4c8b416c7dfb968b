"""SQLite session-items store: one row per item in ``session_items``, ordered by ``seq``.

``seq`` is the table's row id: each append is one write transaction, and
SQLite runs one at a time, so an append's items get consecutive numbers
after every item already held, and two appends never interleave.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from prefrontal.stores.durable import SharesDatabase
from prefrontal.stores.session_items import Item, decoded, encoded
from prefrontal.stores.sqlite.database import Database, erase
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey

_STORE = "session_items"
_KEY = "agent_id = ? AND user_id = ? AND session_id = ?"


class SqliteSessionItemStore(SharesDatabase[Database]):
    """Items in ``session_items``, one JSON text each."""

    async def append(self, key: SessionKey, items: Sequence[Mapping[str, Any]]) -> None:
        texts = encoded(items)
        if not texts:
            return
        rows = [(*_key(key), text) for text in texts]

        def run(connection: sqlite3.Connection) -> None:
            connection.executemany(
                "INSERT INTO session_items (agent_id, user_id, session_id, body)"
                " VALUES (?, ?, ?, ?)",
                rows,
            )

        await self.database.write(run, store=_STORE)

    async def items(self, key: SessionKey, *, limit: int | None = None) -> list[Item]:
        if limit is not None and limit <= 0:
            return []

        def run(connection: sqlite3.Connection) -> list[str]:
            rows = connection.execute(
                f"SELECT body FROM session_items WHERE {_KEY} ORDER BY seq DESC LIMIT ?",
                (*_key(key), -1 if limit is None else limit),
            ).fetchall()
            return [body for (body,) in reversed(rows)]

        return [
            decoded(text)
            for text in await self.database.read(run, store=_STORE, one_statement=True)
        ]

    async def pop(self, key: SessionKey) -> Item | None:
        def run(connection: sqlite3.Connection) -> str | None:
            row = connection.execute(
                f"SELECT seq, body FROM session_items WHERE {_KEY} ORDER BY seq DESC LIMIT 1",
                _key(key),
            ).fetchone()
            if row is None:
                return None
            connection.execute("DELETE FROM session_items WHERE seq = ?", (row[0],))
            return str(row[1])

        text = await self.database.write(run, store=_STORE)
        return None if text is None else decoded(text)

    async def clear(self, key: SessionKey) -> int:
        def run(connection: sqlite3.Connection) -> int:
            return connection.execute(f"DELETE FROM session_items WHERE {_KEY}", _key(key)).rowcount

        return await self.database.write(run, store=_STORE)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.write(lambda c: erase(c, "session_items", tenant), store=_STORE)


def _key(key: SessionKey) -> tuple[str, str, str]:
    return (key.agent_id, key.user_id, key.session_id)
