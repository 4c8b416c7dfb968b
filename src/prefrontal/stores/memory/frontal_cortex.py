"""In-memory frontal-cortex store."""

from __future__ import annotations

from prefrontal.stores.frontal_cortex import FrontalItem, FrontalQuery
from prefrontal.stores.tenancy import Tenant, owns, visible_to
from prefrontal.stores.versioned import check_next, check_stored


def _matches(item: FrontalItem, query: FrontalQuery) -> bool:
    if query.kinds is not None and item.kind not in query.kinds:
        return False
    if query.statuses is not None and item.status not in query.statuses:
        return False
    return query.updated_since is None or item.updated_at > query.updated_since


class InMemoryFrontalCortexStore:
    """Items in a dictionary keyed by ``(agent_id, user_id, item_id)``."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], FrontalItem] = {}

    async def put(self, item: FrontalItem) -> None:
        self._items[(item.agent_id, item.user_id, item.item_id)] = item

    async def get(self, tenant: Tenant, item_id: str) -> FrontalItem | None:
        """The tenant's own item of that id (see :mod:`prefrontal.stores.versioned`)."""
        return self._items.get((tenant.agent_id, tenant.user_id, item_id))

    async def save(self, item: FrontalItem, *, expected_version: int | None) -> None:
        """Compare-and-set (see :mod:`prefrontal.stores.versioned`)."""
        check_next(item.version, expected_version)
        key = (item.agent_id, item.user_id, item.item_id)
        stored = self._items.get(key)
        what = f"{item.kind.value} {item.item_id!r}"
        check_stored(
            None if stored is None else stored.version,
            expected_version,
            what=what,
            store="frontal_cortex",
        )
        self._items[key] = item

    async def query(self, tenant: Tenant, query: FrontalQuery) -> list[FrontalItem]:
        hits = [i for i in self._items.values() if visible_to(i, tenant) and _matches(i, query)]
        hits.sort(key=lambda i: (i.updated_at, i.item_id, i.user_id), reverse=True)
        return hits[: query.limit]

    async def erase(self, tenant: Tenant) -> int:
        mine = [key for key, item in self._items.items() if owns(tenant, item)]
        for key in mine:
            del self._items[key]
        return len(mine)
