"""In-memory scratch page."""

from __future__ import annotations

from datetime import datetime

from prefrontal.stores.scratch_page import Observation
from prefrontal.stores.tenancy import Tenant, visible_to


class InMemoryScratchPageStore:
    """Entries in a dictionary keyed by ``(agent_id, item_id)``."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], Observation] = {}

    async def put(self, observation: Observation) -> None:
        self._entries[(observation.agent_id, observation.item_id)] = observation

    async def active(self, tenant: Tenant, *, now: datetime, limit: int) -> list[Observation]:
        live = [
            entry
            for entry in self._entries.values()
            if visible_to(entry, tenant)
            and not entry.resolved
            and (entry.expires_at is None or entry.expires_at > now)
        ]
        live.sort(key=lambda e: (-e.priority, -e.created_at.timestamp(), e.item_id))
        return live[: max(limit, 0)]

    async def resolve(self, tenant: Tenant, item_id: str) -> bool:
        entry = self._entries.get((tenant.agent_id, item_id))
        if entry is None or not visible_to(entry, tenant):
            return False
        self._entries[(tenant.agent_id, item_id)] = entry.model_copy(update={"resolved": True})
        return True
