"""In-memory session-items store: each session's items as JSON text, in a list."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prefrontal.stores.session_items import Item, decoded, encoded
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey


class InMemorySessionItemStore:
    """Items kept as their JSON text (so every read returns fresh objects), keyed by session."""

    def __init__(self) -> None:
        self._sessions: dict[SessionKey, list[str]] = {}

    async def append(self, key: SessionKey, items: Sequence[Mapping[str, Any]]) -> None:
        texts = encoded(items)
        if texts:
            self._sessions.setdefault(key, []).extend(texts)

    async def items(self, key: SessionKey, *, limit: int | None = None) -> list[Item]:
        texts = self._sessions.get(key, [])
        chosen = texts if limit is None else texts[-limit:] if limit > 0 else []
        return [decoded(text) for text in chosen]

    async def pop(self, key: SessionKey) -> Item | None:
        texts = self._sessions.get(key)
        if not texts:
            return None
        text = texts.pop()
        if not texts:
            del self._sessions[key]
        return decoded(text)

    async def clear(self, key: SessionKey) -> int:
        return len(self._sessions.pop(key, []))

    async def erase(self, tenant: Tenant) -> int:
        owned = [key for key in self._sessions if key.tenant == tenant]
        return sum(len(self._sessions.pop(key)) for key in owned)
