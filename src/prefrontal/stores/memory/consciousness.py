"""In-memory consciousness store."""

from __future__ import annotations

from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.tenancy import Tenant


class InMemoryConsciousnessStore:
    """Profiles in a dictionary keyed by agent id."""

    def __init__(self) -> None:
        self._profiles: dict[str, AgentProfile] = {}

    async def get_profile(self, tenant: Tenant) -> AgentProfile | None:
        return self._profiles.get(tenant.agent_id)

    async def put_profile(self, profile: AgentProfile) -> None:
        self._profiles[profile.agent_id] = profile
