"""In-memory working-memory store with optimistic concurrency."""

from __future__ import annotations

import heapq
from datetime import datetime

from prefrontal.errors import ConflictError
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState

DEFAULT_KEEP = 1_000
"""Sessions an in-memory store keeps unless told otherwise: a process's memory stays bounded."""


class InMemoryWorkingMemoryStore:
    """Session states in a dictionary keyed by :class:`SessionKey`, indexed by owner.

    At most ``keep`` sessions (``None``: no bound): past it, each ``save`` of a
    new session lets the least recently saved one go, as if it had been
    erased (a buffer is tens of kilobytes; a long-running process must not
    keep every session it ever saw).
    """

    def __init__(self, *, keep: int | None = DEFAULT_KEEP) -> None:
        if keep is not None and keep < 1:
            raise ValueError(f"keep must be at least 1 or None, got {keep}")
        self._states: dict[SessionKey, SessionState] = {}
        self._by_owner: dict[tuple[str, str], set[SessionKey]] = {}
        self._keep = keep

    async def load(self, key: SessionKey) -> SessionState | None:
        return self._states.get(key)

    async def save(self, state: SessionState) -> SessionState:
        current = self._states.get(state.key)
        stored_version = current.version if current is not None else 0
        if state.version != stored_version:
            raise ConflictError(
                f"session {state.key.session_id!r} is at version {stored_version}, "
                f"not {state.version}: reload and retry",
                store="working_memory",
            )
        saved = state.model_copy(update={"version": stored_version + 1})
        self._states.pop(state.key, None)  # re-inserted last: the dict is in order of saves
        self._states[state.key] = saved
        self._by_owner.setdefault((state.key.agent_id, state.key.user_id), set()).add(state.key)
        while self._keep is not None and len(self._states) > self._keep:
            self._forget(next(iter(self._states)))
        return saved

    def _forget(self, key: SessionKey) -> None:
        del self._states[key]
        owner = (key.agent_id, key.user_id)
        keys = self._by_owner[owner]
        keys.discard(key)
        if not keys:
            del self._by_owner[owner]

    async def recent_sessions(
        self, tenant: Tenant, *, since: datetime, limit: int
    ) -> list[SessionState]:
        keys = self._by_owner.get((tenant.agent_id, tenant.user_id), set())
        mine = (self._states[k] for k in keys if self._states[k].updated_at >= since)
        return heapq.nlargest(max(limit, 0), mine, key=lambda s: (s.updated_at, s.key.session_id))

    async def erase(self, tenant: Tenant) -> int:
        keys = self._by_owner.pop((tenant.agent_id, tenant.user_id), set())
        for key in keys:
            del self._states[key]
        return len(keys)
