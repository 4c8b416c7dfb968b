"""PostgreSQL frontal-cortex store: goals, actions, questions and stories."""

from __future__ import annotations

from prefrontal.stores.durable import SharesDatabase, dump, read_one, readable
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalQuery
from prefrontal.stores.postgres.database import (
    VISIBLE,
    Connection,
    PostgresDatabase,
    erase_statement,
    storable,
)
from prefrontal.stores.postgres.turn_reads import StateRead
from prefrontal.stores.postgres.versioned import compare_and_put
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.versioned import check_next

_STORE = "frontal_cortex"

_PUT = """
INSERT INTO frontal_items (agent_id, item_id, user_id, scope, kind, status, updated_at, body)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (agent_id, item_id, user_id) DO UPDATE SET
    scope = excluded.scope, kind = excluded.kind,
    status = excluded.status, updated_at = excluded.updated_at, body = excluded.body
"""

_QUERY = StateRead(
    "body",
    f"""FROM frontal_items
WHERE {VISIBLE}
  AND ($3::text[] IS NULL OR kind = ANY($3::text[]))
  AND ($4::text[] IS NULL OR status = ANY($4::text[]))
  AND ($5::timestamptz IS NULL OR updated_at > $5)
ORDER BY updated_at DESC, item_id COLLATE "C" DESC, user_id COLLATE "C" DESC LIMIT $6
""",
)


_GET = "SELECT body FROM frontal_items WHERE agent_id = $1 AND item_id = $2 AND user_id = $3"


def _row(item: FrontalItem) -> tuple[object, ...]:
    return (
        item.agent_id,
        item.item_id,
        item.user_id,
        item.scope.value,
        item.kind.value,
        item.status.value,
        item.updated_at,
        dump(item, store=_STORE),
    )


class PostgresFrontalCortexStore(SharesDatabase[PostgresDatabase]):
    """Items in ``frontal_items``, keyed by ``(agent_id, item_id, user_id)``."""

    async def put(self, item: FrontalItem) -> None:
        await self.database.execute(_PUT, *_row(item), store=_STORE)

    async def get(self, tenant: Tenant, item_id: str) -> FrontalItem | None:
        """The tenant's own item of that id (see :mod:`prefrontal.stores.versioned`)."""
        if not storable(item_id):
            return None

        async def run(connection: Connection) -> FrontalItem | None:
            body = await connection.fetchval(_GET, tenant.agent_id, item_id, tenant.user_id)
            return (
                None
                if body is None
                else read_one(body, FrontalItem.model_validate_json, store=_STORE)
            )

        return await self.database.read(run, store=_STORE)

    async def save(self, item: FrontalItem, *, expected_version: int | None) -> None:
        """Compare-and-set (see :mod:`prefrontal.stores.versioned`)."""
        check_next(item.version, expected_version)
        row = _row(item)

        async def put(connection: Connection) -> None:
            await connection.execute(_PUT, *row)

        await compare_and_put(
            self.database,
            table="frontal_items",
            key=(item.agent_id, item.item_id, item.user_id),
            expected_version=expected_version,
            put=put,
            what=f"{item.kind.value} {item.item_id!r}",
            store=_STORE,
        )

    async def query(self, tenant: Tenant, query: FrontalQuery) -> list[FrontalItem]:
        params = (
            tenant.agent_id,
            tenant.user_id,
            None if query.kinds is None else [kind.value for kind in query.kinds],
            None if query.statuses is None else [status.value for status in query.statuses],
            query.updated_since,
            query.limit,
        )

        rows = await self.database.state_rows(_QUERY, *params, store=_STORE)
        return readable((r[0] for r in rows), FrontalItem.model_validate_json, store=_STORE)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.count(
            erase_statement("frontal_items"), tenant.agent_id, tenant.user_id, store=_STORE
        )
