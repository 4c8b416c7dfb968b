"""In-memory scratch page."""

from __future__ import annotations

from datetime import datetime

from prefrontal.stores.scratch_page import Observation
from prefrontal.stores.tenancy import Tenant, owns, preferred, visible_to
from prefrontal.stores.versioned import check_next, check_stored


class InMemoryScratchPageStore:
    """Entries in a dictionary keyed by ``(agent_id, user_id, item_id)``."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, str], Observation] = {}

    async def put(self, observation: Observation) -> None:
        self._entries[_key(observation)] = observation

    async def get(self, tenant: Tenant, item_id: str) -> Observation | None:
        """The tenant's own entry of that id (see :mod:`prefrontal.stores.versioned`)."""
        return self._entries.get((tenant.agent_id, tenant.user_id, item_id))

    async def save(self, observation: Observation, *, expected_version: int | None) -> None:
        """Compare-and-set (see :mod:`prefrontal.stores.versioned`)."""
        check_next(observation.version, expected_version)
        stored = self._entries.get(_key(observation))
        what = f"{observation.kind.value} {observation.item_id!r}"
        check_stored(
            None if stored is None else stored.version,
            expected_version,
            what=what,
            store="scratch_page",
        )
        self._entries[_key(observation)] = observation

    async def active(self, tenant: Tenant, *, now: datetime, limit: int) -> list[Observation]:
        live = [
            entry
            for entry in self._entries.values()
            if visible_to(entry, tenant)
            and not entry.resolved
            and (entry.expires_at is None or entry.expires_at > now)
        ]
        live.sort(key=lambda e: (-e.priority, -e.created_at.timestamp(), e.item_id, e.user_id))
        return live[: max(limit, 0)]

    async def resolve(self, tenant: Tenant, item_id: str) -> bool:
        same = (e for e in self._entries.values() if e.item_id == item_id)
        entry = preferred(same, tenant)
        if entry is None:
            return False
        self._entries[_key(entry)] = entry.model_copy(update={"resolved": True})
        return True

    async def erase(self, tenant: Tenant) -> int:
        mine = [key for key, entry in self._entries.items() if owns(tenant, entry)]
        for key in mine:
            del self._entries[key]
        return len(mine)


def _key(entry: Observation) -> tuple[str, str, str]:
    return (entry.agent_id, entry.user_id, entry.item_id)
