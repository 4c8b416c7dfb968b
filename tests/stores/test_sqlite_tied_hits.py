"""SQLite reads the records of the best ``limit`` hits only, when many more rows tie with them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from prefrontal.stores import sqlite
from prefrontal.stores.long_term import MemoryItem, MemoryQuery
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.tenancy import Scope, Tenant

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 2, 1, tzinfo=UTC)
ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")


def items() -> list[MemoryItem]:
    """Forty lines alike (every one ties with every other) of two users, shared and private,
    some of one id for both users, and a few lines that score higher."""
    alike = [
        MemoryItem(
            item_id=f"line-{i % 30:02d}",
            agent_id="agent-1",
            user_id="alice" if i < 30 else "bob",
            scope=Scope.SHARED if i % 3 == 0 else Scope.PRIVATE,
            content="Lena signs the payment review off on Friday",
            created_at=NOW,
        )
        for i in range(40)
    ]
    better = [
        MemoryItem(
            item_id=f"best-{i}",
            agent_id="agent-1",
            user_id="alice",
            content="payment review payment review" + " again" * i,
            created_at=NOW,
        )
        for i in range(3)
    ]
    return alike + better


async def test_hits_tied_past_the_limit_are_the_in_memory_stores(tmp_path: Path) -> None:
    """The same items, order, scores and records as the in-memory store, for limits below,
    at and above the rows tied, whether the rows are read in one statement or two."""
    stores = sqlite.open_stores(tmp_path / "tied.db")
    try:
        stored = stores.episodic
        assert isinstance(stored, SqliteMemoryStore)
        memory = InMemoryMemoryStore()
        await memory.put_many(items())
        await stored.put_many(items())
        for text in ("payment review", "Lena on Friday", "signs"):
            for tenant in (ALICE, BOB):
                for limit in (1, 3, 5, 12, 40, 60):
                    query = MemoryQuery(text=text, limit=limit, now=NOW)
                    expected = await memory.search(tenant, query)
                    got = await stored.search(tenant, query)
                    assert [(h.item, h.score, h.signals) for h in got] == [
                        (h.item, h.score, h.signals) for h in expected
                    ], (text, tenant, limit)
    finally:
        await stores.aclose()
