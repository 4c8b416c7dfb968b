"""PostgreSQL session-items store: one row per item in ``session_items``, ordered by ``seq``.

``seq`` is an identity column. An append, a pop and a clear of one session
each hold a transaction-scoped advisory lock on the session (keyed in this
schema), so of two appends from any processes one commits before the other
starts: a session's items never interleave, and a pop takes the newest
committed item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prefrontal.stores.durable import SharesDatabase
from prefrontal.stores.postgres.database import Connection, PostgresDatabase, erase_statement
from prefrontal.stores.session_items import Item, decoded, encoded
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey

_STORE = "session_items"
_KEY = "agent_id = $1 AND user_id = $2 AND session_id = $3"
_LOCK = (
    "SELECT pg_advisory_xact_lock(hashtextextended("
    "current_schema() || ':session:' || $1 || chr(31) || $2 || chr(31) || $3, 0))"
)


class PostgresSessionItemStore(SharesDatabase[PostgresDatabase]):
    """Items in ``session_items``, one JSON text each."""

    async def append(self, key: SessionKey, items: Sequence[Mapping[str, Any]]) -> None:
        texts = encoded(items)
        if not texts:
            return

        async def run(connection: Connection) -> None:
            await connection.execute(_LOCK, *_key(key))
            await connection.execute(
                "INSERT INTO session_items (agent_id, user_id, session_id, body)"
                " SELECT $1, $2, $3, body FROM unnest($4::text[]) WITH ORDINALITY AS t(body, n)"
                " ORDER BY n",
                *_key(key),
                texts,
            )

        await self.database.write(run, store=_STORE)

    async def items(self, key: SessionKey, *, limit: int | None = None) -> list[Item]:
        if limit is not None and limit <= 0:
            return []

        async def run(connection: Connection) -> list[str]:
            rows = await connection.fetch(
                f"SELECT body FROM session_items WHERE {_KEY} ORDER BY seq DESC LIMIT $4",
                *_key(key),
                limit,
            )
            return [row[0] for row in reversed(rows)]

        return [decoded(text) for text in await self.database.read(run, store=_STORE)]

    async def pop(self, key: SessionKey) -> Item | None:
        async def run(connection: Connection) -> str | None:
            await connection.execute(_LOCK, *_key(key))
            body: str | None = await connection.fetchval(
                "DELETE FROM session_items WHERE seq = (SELECT seq FROM session_items"
                f" WHERE {_KEY} ORDER BY seq DESC LIMIT 1) RETURNING body",
                *_key(key),
            )
            return body

        text = await self.database.write(run, store=_STORE)
        return None if text is None else decoded(text)

    async def clear(self, key: SessionKey) -> int:
        async def run(connection: Connection) -> int:
            await connection.execute(_LOCK, *_key(key))
            status: str = await connection.execute(
                f"DELETE FROM session_items WHERE {_KEY}", *_key(key)
            )
            return int(status.rsplit(" ", 1)[-1])

        return await self.database.write(run, store=_STORE)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.count(
            erase_statement("session_items"), tenant.agent_id, tenant.user_id, store=_STORE
        )


def _key(key: SessionKey) -> tuple[str, str, str]:
    return (key.agent_id, key.user_id, key.session_id)
