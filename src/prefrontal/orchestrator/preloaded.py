"""A working-memory store that answers one session's load from a state already read.

``end_turn`` reads the session's buffer state together with everything else
it needs (one read), builds the buffer from it, and writes the state the
buffer saves in the exchange's transaction. :class:`Preloaded` stands
between the buffer and the store for that: ``load`` returns the state read
(the real store's ``load`` after the first call), ``save`` keeps the state
(:attr:`Preloaded.saved`) and returns it with the next version, writing
nothing; the transaction's version check decides whether it is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState, WorkingMemoryStore


class Preloaded:
    """A :class:`WorkingMemoryStore` for one session whose state was read beforehand."""

    def __init__(self, store: WorkingMemoryStore, state: SessionState | None) -> None:
        self.store = store
        self._state: SessionState | None = state
        self._loaded = False
        self.saved: SessionState | None = None
        """The last state handed to :meth:`save` (its ``version`` is the one it replaces)."""

    async def load(self, key: SessionKey) -> SessionState | None:
        if self._loaded:
            return await self.store.load(key)
        self._loaded = True
        return self._state

    async def save(self, state: SessionState) -> SessionState:
        self.saved = state
        return state.model_copy(update={"version": state.version + 1})

    async def recent_sessions(
        self, tenant: Tenant, *, since: datetime, limit: int
    ) -> list[SessionState]:
        return await self.store.recent_sessions(tenant, since=since, limit=limit)

    async def sessions(
        self, agent_id: str, *, user_id: str | None = None, containing: Sequence[str] = ()
    ) -> list[SessionKey]:
        return await self.store.sessions(agent_id, user_id=user_id, containing=containing)

    async def erase(self, tenant: Tenant) -> int:
        return await self.store.erase(tenant)
