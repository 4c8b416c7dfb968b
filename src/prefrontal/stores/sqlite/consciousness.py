"""SQLite consciousness store: one JSON profile per agent."""

from __future__ import annotations

import sqlite3

from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.durable import SharesDatabase, dump, read_one
from prefrontal.stores.sqlite.database import Database
from prefrontal.stores.tenancy import Tenant

_STORE = "consciousness"


class SqliteConsciousnessStore(SharesDatabase[Database]):
    """Profiles in the ``profiles`` table, keyed by agent id."""

    async def get_profile(self, tenant: Tenant) -> AgentProfile | None:
        def run(connection: sqlite3.Connection) -> AgentProfile | None:
            row = connection.execute(
                "SELECT body FROM profiles WHERE agent_id = ?", (tenant.agent_id,)
            ).fetchone()
            return (
                None
                if row is None
                else read_one(row[0], AgentProfile.model_validate_json, store=_STORE)
            )

        return await self.database.read(run, store=_STORE)

    async def put_profile(self, profile: AgentProfile) -> None:
        def run(connection: sqlite3.Connection) -> None:
            body = dump(profile, store=_STORE)
            connection.execute(
                "INSERT INTO profiles (agent_id, body) VALUES (?, ?)"
                " ON CONFLICT (agent_id) DO UPDATE SET body = excluded.body",
                (profile.agent_id, body),
            )

        await self.database.write(run, store=_STORE)
