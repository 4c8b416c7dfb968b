"""In-memory working-memory store with optimistic concurrency."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from datetime import datetime

from prefrontal.errors import ConflictError
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState

DEFAULT_KEEP = 1_000
"""Sessions an in-memory store keeps unless told otherwise: a process's memory stays bounded."""


_Entry = tuple[datetime, str, SessionState]
"""An owner's index entry: ``(updated_at, session_id, state)``, ordered by the first two."""


class InMemoryWorkingMemoryStore:
    """Session states in a dictionary keyed by :class:`SessionKey`, indexed by owner.

    At most ``keep`` sessions (``None``: no bound): past it, each ``save`` of a
    new session lets the least recently saved one go, as if it had been
    erased (a buffer is tens of kilobytes; a long-running process must not
    keep every session it ever saw).

    Each owner's sessions are also kept sorted by last update (then session
    id), so :meth:`recent_sessions` reads the most recent from the end
    without scanning every session the owner has.
    """

    def __init__(self, *, keep: int | None = DEFAULT_KEEP) -> None:
        if keep is not None and keep < 1:
            raise ValueError(f"keep must be at least 1 or None, got {keep}")
        self._states: dict[SessionKey, SessionState] = {}
        self._by_owner: dict[tuple[str, str], list[_Entry]] = {}
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
        if current is not None:
            self._unindex(current)
        self._states.pop(state.key, None)  # re-inserted last: the dict is in order of saves
        self._states[state.key] = saved
        entries = self._by_owner.setdefault((state.key.agent_id, state.key.user_id), [])
        bisect.insort(entries, _entry(saved), key=_order)
        while self._keep is not None and len(self._states) > self._keep:
            self._unindex(self._states.pop(next(iter(self._states))))
        return saved

    def _unindex(self, state: SessionState) -> None:
        """Take ``state`` out of its owner's index (the owner goes with its last session)."""
        owner = (state.key.agent_id, state.key.user_id)
        entries = self._by_owner[owner]
        del entries[bisect.bisect_left(entries, _order(_entry(state)), key=_order)]
        if not entries:
            del self._by_owner[owner]

    async def sessions(
        self, agent_id: str, *, user_id: str | None = None, containing: Sequence[str] = ()
    ) -> list[SessionKey]:
        return [
            key
            for key, state in self._states.items()
            if key.agent_id == agent_id
            and user_id in (None, key.user_id)
            and (not containing or any(text in state.model_dump_json() for text in containing))
        ]

    async def recent_sessions(
        self, tenant: Tenant, *, since: datetime, limit: int
    ) -> list[SessionState]:
        entries = self._by_owner.get((tenant.agent_id, tenant.user_id), [])
        recent: list[SessionState] = []
        for updated_at, _, state in reversed(entries):
            if len(recent) >= limit or updated_at < since:
                break
            recent.append(state)
        return recent

    async def erase(self, tenant: Tenant) -> int:
        entries = self._by_owner.pop((tenant.agent_id, tenant.user_id), [])
        for _, _, state in entries:
            del self._states[state.key]
        return len(entries)


def _entry(state: SessionState) -> _Entry:
    return (state.updated_at, state.key.session_id, state)


def _order(entry: _Entry) -> tuple[datetime, str]:
    return entry[0], entry[1]
