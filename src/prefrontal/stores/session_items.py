"""The session-items store: a framework session's items, kept in order and as given.

A framework's session (the Agents SDK's ``Session``) hands over items
prefrontal neither renders nor interprets: messages with content parts,
function calls and their outputs, reasoning items, ids. This store keeps
them, one JSON object each, per session of one ``(agent, user)``, so that
the session returns exactly what it was given, from every session object
of the id, in any process over the same database. They are the user's
records: erasing the user removes them.

Contract:

- ``append`` adds ``items`` after the session's newest, in the order given,
  all or none; every item is a JSON object (``ValueError`` otherwise, with
  nothing written); two appends to one session never interleave;
- ``items`` returns the session's items oldest first, equal to what was
  given (fresh objects); with ``limit`` the newest ``limit`` of them
  (``limit`` > 0; ``None`` for all);
- ``pop`` removes and returns the newest item (``None`` when there is none);
- ``clear`` removes the session's items and returns how many;
- ``erase`` removes every session's items of the tenant and returns how
  many; no call reads or changes another tenant's items.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from prefrontal.stores.durable import encodable
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey

Item = dict[str, Any]
"""One session item: a JSON object."""


@runtime_checkable
class SessionItemStore(Protocol):
    """Keeps the items of each framework session, oldest first (see the module)."""

    async def append(self, key: SessionKey, items: Sequence[Mapping[str, Any]]) -> None:
        """Add ``items`` after the session's newest, in order, all or none."""
        ...

    async def items(self, key: SessionKey, *, limit: int | None = None) -> list[Item]:
        """The session's items, oldest first: every one, or the newest ``limit``."""
        ...

    async def pop(self, key: SessionKey) -> Item | None:
        """Remove and return the session's newest item, if any."""
        ...

    async def clear(self, key: SessionKey) -> int:
        """Remove the session's items; how many there were."""
        ...

    async def erase(self, tenant: Tenant) -> int:
        """Remove the items of every session of ``tenant``; how many there were."""
        ...


def encoded(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each item as compact JSON text; ``ValueError`` for an item that is not a JSON object."""
    texts = []
    for item in items:
        if not isinstance(item, Mapping):
            raise ValueError(f"a session item is a JSON object, not {type(item).__name__}")
        try:
            text = json.dumps(dict(item), ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as error:
            raise ValueError(f"a session item must be JSON: {error}") from error
        if not encodable(text):  # a lone surrogate: kept as its JSON escape
            text = json.dumps(dict(item), separators=(",", ":"))
        texts.append(text)
    return texts


def decoded(text: str) -> Item:
    """An item from its stored JSON text."""
    item: Item = json.loads(text)
    return item
