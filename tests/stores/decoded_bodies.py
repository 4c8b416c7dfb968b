"""What the decoded-body tests of the SQLite and PostgreSQL memory stores share: Alice's
items, and the bodies the one cache (:data:`prefrontal.stores.decoded_items.DECODED`)
validates."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from prefrontal.forgetting import forget_everything
from prefrontal.stores import MemoryItem, Tenant
from prefrontal.stores.decoded_items import DECODED
from tests.conftest import FIXED_NOW

ALICE = Tenant(agent_id="agent-1", user_id="alice")


def counted_validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The bodies validated from now on (the cache emptied first)."""
    forget_everything()
    seen: list[str] = []
    validate: Callable[[str], MemoryItem] = DECODED._compute

    def counted(body: str) -> MemoryItem:
        seen.append(body)
        return validate(body)

    monkeypatch.setattr(DECODED, "_compute", counted)
    return seen


def item(item_id: str, content: str) -> MemoryItem:
    """Alice's episodic item ``item_id`` saying ``content``."""
    return MemoryItem(
        item_id=item_id,
        agent_id=ALICE.agent_id,
        user_id=ALICE.user_id,
        content=content,
        created_at=FIXED_NOW,
        metadata={"source": "test"},
    )
