"""PostgreSQL consciousness store: one JSON profile per agent."""

from __future__ import annotations

from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.durable import SharesDatabase, dump, read_one
from prefrontal.stores.postgres.database import Connection, PostgresDatabase
from prefrontal.stores.postgres.turn_reads import StateRead
from prefrontal.stores.postgres.versioned import compare_and_put
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.versioned import check_next

_STORE = "consciousness"
_PROFILE = StateRead("body", "FROM profiles WHERE agent_id = $1")


_PUT = (
    "INSERT INTO profiles (agent_id, body) VALUES ($1, $2)"
    " ON CONFLICT (agent_id) DO UPDATE SET body = excluded.body"
)


class PostgresConsciousnessStore(SharesDatabase[PostgresDatabase]):
    """Profiles in the ``profiles`` table, keyed by agent id."""

    async def get_profile(self, tenant: Tenant) -> AgentProfile | None:
        rows = await self.database.state_rows(_PROFILE, tenant.agent_id, store=_STORE)
        if not rows:
            return None
        return read_one(rows[0][0], AgentProfile.model_validate_json, store=_STORE)

    async def put_profile(self, profile: AgentProfile) -> None:
        body = dump(profile, store=_STORE)

        await self.database.execute(_PUT, profile.agent_id, body, store=_STORE)

    async def save_profile(self, profile: AgentProfile, *, expected_version: int | None) -> None:
        """Compare-and-set (see :mod:`prefrontal.stores.versioned`)."""
        check_next(profile.version, expected_version)
        body = dump(profile, store=_STORE)

        async def put(connection: Connection) -> None:
            await connection.execute(_PUT, profile.agent_id, body)

        await compare_and_put(
            self.database,
            table="profiles",
            key=(profile.agent_id,),
            expected_version=expected_version,
            put=put,
            what=f"the profile of {profile.agent_id!r}",
            store=_STORE,
        )
