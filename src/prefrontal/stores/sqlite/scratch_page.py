"""SQLite scratch page."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from prefrontal.stores.durable import SharesDatabase, dump, encodable, read_one, readable
from prefrontal.stores.scratch_page import Observation
from prefrontal.stores.sqlite import decoded
from prefrontal.stores.sqlite.database import VISIBLE, Database, erase, to_us, to_us_or_none
from prefrontal.stores.sqlite.versioned import check_version
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.versioned import check_next

_STORE = "scratch_page"

_FIND = f"""
SELECT user_id, body FROM scratch_entries WHERE {VISIBLE} AND item_id = :item
ORDER BY user_id != :user, user_id LIMIT 1
"""
"""The entry of that id the tenant is given: its own, else the first owner's shared one."""

_ACTIVE = f"""
SELECT body FROM scratch_entries
WHERE {VISIBLE} AND resolved = 0 AND (expires_at IS NULL OR expires_at > :now)
ORDER BY priority DESC, created_at DESC, item_id, user_id LIMIT :limit
"""


_PUT = (
    "INSERT OR REPLACE INTO scratch_entries (agent_id, item_id, user_id, scope,"
    " resolved, priority, created_at, expires_at, body)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_GET = "SELECT body FROM scratch_entries WHERE agent_id = ? AND item_id = ? AND user_id = ?"


class SqliteScratchPageStore(SharesDatabase[Database]):
    """Entries in ``scratch_entries``, keyed by ``(agent_id, item_id, user_id)``."""

    async def put(self, observation: Observation) -> None:
        def run(connection: sqlite3.Connection) -> None:
            connection.execute(_PUT, _row(observation))

        await self.database.write(run, store=_STORE)

    async def get(self, tenant: Tenant, item_id: str) -> Observation | None:
        """The tenant's own entry of that id (see :mod:`prefrontal.stores.versioned`)."""
        if not encodable(item_id):
            return None
        key = (tenant.agent_id, item_id, tenant.user_id)

        def run(connection: sqlite3.Connection) -> Observation | None:
            row = connection.execute(_GET, key).fetchone()
            return None if row is None else read_one(row[0], decoded.observation, store=_STORE)

        return await self.database.read(run, store=_STORE, one_statement=True)

    async def save(self, observation: Observation, *, expected_version: int | None) -> None:
        """Compare-and-set (see :mod:`prefrontal.stores.versioned`)."""
        check_next(observation.version, expected_version)
        row = _row(observation)

        def run(connection: sqlite3.Connection) -> None:
            check_version(
                connection,
                table="scratch_entries",
                key=(observation.agent_id, observation.item_id, observation.user_id),
                expected_version=expected_version,
                what=f"{observation.kind.value} {observation.item_id!r}",
                store=_STORE,
            )
            connection.execute(_PUT, row)

        await self.database.write(run, store=_STORE)

    async def active(self, tenant: Tenant, *, now: datetime, limit: int) -> list[Observation]:
        if limit <= 0:
            return []
        params: dict[str, object] = {"agent": tenant.agent_id, "user": tenant.user_id}
        params |= {"now": to_us(now), "limit": limit}

        def run(connection: sqlite3.Connection) -> list[Observation]:
            rows = connection.execute(_ACTIVE, params).fetchall()
            return readable((b for (b,) in rows), decoded.observation, store=_STORE)

        return await self.database.read(run, store=_STORE, one_statement=True, quick=True)

    async def resolve(self, tenant: Tenant, item_id: str) -> bool:
        if not encodable(item_id):
            return False
        params = {"agent": tenant.agent_id, "user": tenant.user_id, "item": item_id}

        def run(connection: sqlite3.Connection) -> bool:
            row = connection.execute(_FIND, params).fetchone()
            if row is None:
                return False
            owner, body = row
            stored = read_one(body, Observation.model_validate_json, store=_STORE)
            resolved = stored.model_copy(update={"resolved": True})
            connection.execute(
                "UPDATE scratch_entries SET resolved = 1, body = ?"
                " WHERE agent_id = ? AND item_id = ? AND user_id = ?",
                (dump(resolved, store=_STORE), tenant.agent_id, item_id, owner),
            )
            return True

        return await self.database.write(run, store=_STORE)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.write(
            lambda connection: erase(connection, "scratch_entries", tenant), store=_STORE
        )


def _row(entry: Observation) -> tuple[object, ...]:
    return (
        entry.agent_id,
        entry.item_id,
        entry.user_id,
        entry.scope.value,
        int(entry.resolved),
        entry.priority,
        to_us(entry.created_at),
        to_us_or_none(entry.expires_at),
        dump(entry, store=_STORE),
    )
