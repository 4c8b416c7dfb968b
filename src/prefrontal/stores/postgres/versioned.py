"""Compare-and-set on PostgreSQL: the check and the write in one transaction, one key at a time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import BaseModel

from prefrontal.stores.durable import read_one
from prefrontal.stores.postgres.database import Connection, PostgresDatabase
from prefrontal.stores.versioned import check_stored


async def compare_and_put(
    database: PostgresDatabase,
    *,
    table: str,
    key: tuple[str, ...],
    expected_version: int | None,
    put: Callable[[Connection], Awaitable[object]],
    what: str,
    store: str,
) -> None:
    """Run ``put`` if the row of ``key`` is at ``expected_version``; else ``ConflictError``.

    ``key`` is ``(agent_id,)`` for ``profiles``, ``(agent_id, item_id,
    user_id)`` otherwise. A transaction-scoped advisory lock on the key
    serialises savers of one record, creations included (two creators
    never both see "no row").
    """
    where = "agent_id = $1" if len(key) == 1 else "agent_id = $1 AND item_id = $2 AND user_id = $3"

    async def run(connection: Connection) -> None:
        await connection.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            f"{table}\x1f" + "\x1f".join(key),
        )
        body = await connection.fetchval(f"SELECT body FROM {table} WHERE {where}", *key)
        stored = (
            None if body is None else read_one(body, _Versioned.model_validate_json, store=store)
        )
        check_stored(
            None if stored is None else stored.version, expected_version, what=what, store=store
        )
        await put(connection)

    await database.write(run, store=store)


class _Versioned(BaseModel):
    """The version of a stored body; its other fields are ignored."""

    version: int = 1
