"""SQLite consciousness store: one JSON profile per agent."""

from __future__ import annotations

import sqlite3

from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.durable import SharesDatabase, dump, read_one
from prefrontal.stores.sqlite import decoded
from prefrontal.stores.sqlite.database import Database
from prefrontal.stores.sqlite.versioned import check_version
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.versioned import check_next

_STORE = "consciousness"


_PUT = (
    "INSERT INTO profiles (agent_id, body) VALUES (?, ?)"
    " ON CONFLICT (agent_id) DO UPDATE SET body = excluded.body"
)


class SqliteConsciousnessStore(SharesDatabase[Database]):
    """Profiles in the ``profiles`` table, keyed by agent id."""

    async def get_profile(self, tenant: Tenant) -> AgentProfile | None:
        def run(connection: sqlite3.Connection) -> AgentProfile | None:
            row = connection.execute(
                "SELECT body FROM profiles WHERE agent_id = ?", (tenant.agent_id,)
            ).fetchone()
            return None if row is None else read_one(row[0], decoded.agent_profile, store=_STORE)

        return await self.database.read(run, store=_STORE, one_statement=True, quick=True)

    async def put_profile(self, profile: AgentProfile) -> None:
        def run(connection: sqlite3.Connection) -> None:
            body = dump(profile, store=_STORE)
            connection.execute(_PUT, (profile.agent_id, body))

        await self.database.write(run, store=_STORE)

    async def save_profile(self, profile: AgentProfile, *, expected_version: int | None) -> None:
        """Compare-and-set (see :mod:`prefrontal.stores.versioned`)."""
        check_next(profile.version, expected_version)
        body = dump(profile, store=_STORE)

        def run(connection: sqlite3.Connection) -> None:
            check_version(
                connection,
                table="profiles",
                key=(profile.agent_id,),
                expected_version=expected_version,
                what=f"the profile of {profile.agent_id!r}",
                store=_STORE,
            )
            connection.execute(_PUT, (profile.agent_id, body))

        await self.database.write(run, store=_STORE)
