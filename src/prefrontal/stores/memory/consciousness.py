"""In-memory consciousness store."""

from __future__ import annotations

from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.versioned import check_next, check_stored


class InMemoryConsciousnessStore:
    """Profiles in a dictionary keyed by agent id."""

    def __init__(self) -> None:
        self._profiles: dict[str, AgentProfile] = {}

    async def get_profile(self, tenant: Tenant) -> AgentProfile | None:
        return self._profiles.get(tenant.agent_id)

    async def put_profile(self, profile: AgentProfile) -> None:
        self._profiles[profile.agent_id] = profile

    async def save_profile(self, profile: AgentProfile, *, expected_version: int | None) -> None:
        """Compare-and-set (see :mod:`prefrontal.stores.versioned`)."""
        check_next(profile.version, expected_version)
        stored = self._profiles.get(profile.agent_id)
        what = f"the profile of {profile.agent_id!r}"
        check_stored(
            None if stored is None else stored.version,
            expected_version,
            what=what,
            store="consciousness",
        )
        self._profiles[profile.agent_id] = profile
