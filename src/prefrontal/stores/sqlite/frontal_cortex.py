"""SQLite frontal-cortex store: goals, actions, questions and stories."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from prefrontal.stores.durable import SharesDatabase, dump, encodable, read_one, readable
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalQuery
from prefrontal.stores.sqlite import decoded
from prefrontal.stores.sqlite.database import VISIBLE, Database, erase, to_us
from prefrontal.stores.sqlite.versioned import check_version
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.versioned import check_next

_STORE = "frontal_cortex"


_PUT = (
    "INSERT OR REPLACE INTO frontal_items (agent_id, item_id, user_id, scope,"
    " kind, status, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_GET = "SELECT body FROM frontal_items WHERE agent_id = ? AND item_id = ? AND user_id = ?"


def _row(item: FrontalItem) -> tuple[object, ...]:
    return (
        item.agent_id,
        item.item_id,
        item.user_id,
        item.scope.value,
        item.kind.value,
        item.status.value,
        to_us(item.updated_at),
        dump(item, store=_STORE),
    )


class SqliteFrontalCortexStore(SharesDatabase[Database]):
    """Items in ``frontal_items``, keyed by ``(agent_id, item_id, user_id)``."""

    async def put(self, item: FrontalItem) -> None:
        def run(connection: sqlite3.Connection) -> None:
            connection.execute(_PUT, _row(item))

        await self.database.write(run, store=_STORE)

    async def get(self, tenant: Tenant, item_id: str) -> FrontalItem | None:
        """The tenant's own item of that id (see :mod:`prefrontal.stores.versioned`)."""
        if not encodable(item_id):
            return None
        key = (tenant.agent_id, item_id, tenant.user_id)

        def run(connection: sqlite3.Connection) -> FrontalItem | None:
            row = connection.execute(_GET, key).fetchone()
            return None if row is None else read_one(row[0], decoded.frontal_item, store=_STORE)

        return await self.database.read(run, store=_STORE, one_statement=True)

    async def save(self, item: FrontalItem, *, expected_version: int | None) -> None:
        """Compare-and-set (see :mod:`prefrontal.stores.versioned`)."""
        check_next(item.version, expected_version)
        row = _row(item)

        def run(connection: sqlite3.Connection) -> None:
            check_version(
                connection,
                table="frontal_items",
                key=(item.agent_id, item.item_id, item.user_id),
                expected_version=expected_version,
                what=f"{item.kind.value} {item.item_id!r}",
                store=_STORE,
            )
            connection.execute(_PUT, row)

        await self.database.write(run, store=_STORE)

    async def query(self, tenant: Tenant, query: FrontalQuery) -> list[FrontalItem]:
        sql, params = _select(tenant, query)

        def run(connection: sqlite3.Connection) -> list[FrontalItem]:
            rows = connection.execute(sql, params).fetchall()
            return readable((b for (b,) in rows), decoded.frontal_item, store=_STORE)

        return await self.database.read(run, store=_STORE, one_statement=True, quick=True)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.write(
            lambda connection: erase(connection, "frontal_items", tenant), store=_STORE
        )


def _select(tenant: Tenant, query: FrontalQuery) -> tuple[str, dict[str, Any]]:
    where = [VISIBLE]
    params: dict[str, Any] = {"agent": tenant.agent_id, "user": tenant.user_id}
    if query.kinds is not None:
        where.append("kind IN (SELECT value FROM json_each(:kinds))")
        params["kinds"] = json.dumps([kind.value for kind in query.kinds])
    if query.statuses is not None:
        where.append("status IN (SELECT value FROM json_each(:statuses))")
        params["statuses"] = json.dumps([status.value for status in query.statuses])
    if query.updated_since is not None:
        where.append("updated_at > :since")
        params["since"] = to_us(query.updated_since)
    params["limit"] = query.limit
    sql = (
        f"SELECT body FROM frontal_items WHERE {' AND '.join(where)}"
        " ORDER BY updated_at DESC, item_id DESC, user_id DESC LIMIT :limit"
    )
    return sql, params
