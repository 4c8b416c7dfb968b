"""PostgreSQL scratch page."""

from __future__ import annotations

from datetime import datetime

from prefrontal.stores.durable import SharesDatabase, dump, read_one, readable
from prefrontal.stores.postgres.database import (
    VISIBLE,
    Connection,
    PostgresDatabase,
    erase_statement,
    storable,
)
from prefrontal.stores.postgres.turn_reads import StateRead
from prefrontal.stores.postgres.versioned import compare_and_put
from prefrontal.stores.scratch_page import Observation
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.versioned import check_next

_STORE = "scratch_page"

_PUT = """
INSERT INTO scratch_entries (agent_id, item_id, user_id, scope, resolved, priority, created_at,
    expires_at, body)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (agent_id, item_id, user_id) DO UPDATE SET
    scope = excluded.scope, resolved = excluded.resolved,
    priority = excluded.priority, created_at = excluded.created_at,
    expires_at = excluded.expires_at, body = excluded.body
"""

_ACTIVE = StateRead(
    "body",
    f"""FROM scratch_entries
WHERE {VISIBLE} AND NOT resolved AND (expires_at IS NULL OR expires_at > $3)
ORDER BY priority DESC, created_at DESC, item_id COLLATE "C", user_id COLLATE "C" LIMIT $4
""",
)

_FIND = f"""
SELECT user_id, body FROM scratch_entries WHERE {VISIBLE} AND item_id = $3
ORDER BY user_id <> $2, user_id COLLATE "C" LIMIT 1 FOR UPDATE
"""
"""The entry of that id the tenant is given: its own, else the first owner's shared one."""


_GET = "SELECT body FROM scratch_entries WHERE agent_id = $1 AND item_id = $2 AND user_id = $3"


def _row(observation: Observation) -> tuple[object, ...]:
    return (
        observation.agent_id,
        observation.item_id,
        observation.user_id,
        observation.scope.value,
        observation.resolved,
        observation.priority,
        observation.created_at,
        observation.expires_at,
        dump(observation, store=_STORE),
    )


class PostgresScratchPageStore(SharesDatabase[PostgresDatabase]):
    """Entries in ``scratch_entries``, keyed by ``(agent_id, item_id, user_id)``."""

    async def put(self, observation: Observation) -> None:
        await self.database.execute(_PUT, *_row(observation), store=_STORE)

    async def get(self, tenant: Tenant, item_id: str) -> Observation | None:
        """The tenant's own entry of that id (see :mod:`prefrontal.stores.versioned`)."""
        if not storable(item_id):
            return None

        async def run(connection: Connection) -> Observation | None:
            body = await connection.fetchval(_GET, tenant.agent_id, item_id, tenant.user_id)
            return (
                None
                if body is None
                else read_one(body, Observation.model_validate_json, store=_STORE)
            )

        return await self.database.read(run, store=_STORE)

    async def save(self, observation: Observation, *, expected_version: int | None) -> None:
        """Compare-and-set (see :mod:`prefrontal.stores.versioned`)."""
        check_next(observation.version, expected_version)
        row = _row(observation)

        async def put(connection: Connection) -> None:
            await connection.execute(_PUT, *row)

        await compare_and_put(
            self.database,
            table="scratch_entries",
            key=(observation.agent_id, observation.item_id, observation.user_id),
            expected_version=expected_version,
            put=put,
            what=f"{observation.kind.value} {observation.item_id!r}",
            store=_STORE,
        )

    async def active(self, tenant: Tenant, *, now: datetime, limit: int) -> list[Observation]:
        if limit <= 0:
            return []

        args = (tenant.agent_id, tenant.user_id, now, limit)
        rows = await self.database.state_rows(_ACTIVE, *args, store=_STORE)
        return readable((r[0] for r in rows), Observation.model_validate_json, store=_STORE)

    async def resolve(self, tenant: Tenant, item_id: str) -> bool:
        if not storable(item_id):
            return False

        async def run(connection: Connection) -> bool:
            row = await connection.fetchrow(_FIND, tenant.agent_id, tenant.user_id, item_id)
            if row is None:
                return False
            owner, body = row
            stored = read_one(body, Observation.model_validate_json, store=_STORE)
            resolved = stored.model_copy(update={"resolved": True})
            await connection.execute(
                "UPDATE scratch_entries SET resolved = true, body = $3"
                " WHERE agent_id = $1 AND item_id = $2 AND user_id = $4",
                tenant.agent_id,
                item_id,
                dump(resolved, store=_STORE),
                owner,
            )
            return True

        return await self.database.write(run, store=_STORE)

    async def erase(self, tenant: Tenant) -> int:
        return await self.database.count(
            erase_statement("scratch_entries"), tenant.agent_id, tenant.user_id, store=_STORE
        )
