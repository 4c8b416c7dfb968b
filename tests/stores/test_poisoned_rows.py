"""One unreadable row (a ``NaN`` in its JSON, broken JSON) is skipped, never fatal to a read.

The rows are spoiled behind the store's back, with SQL, as a bug in an older
version or a hand edit would leave them, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from prefrontal import Orchestrator, PhaseStatus, Stores, TurnRequest
from prefrontal.demo import seed
from prefrontal.errors import StoreError
from prefrontal.stores import MemoryItem, MemoryQuery, Tenant, postgres, sqlite
from prefrontal.stores.conversation import ConversationTurn, Role
from prefrontal.stores.postgres import PostgresDatabase
from prefrontal.stores.sqlite import Database
from tests.conftest import FIXED_NOW, counting_ids, fixed_clock

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")
NAN_METADATA = """'{"x":NaN}'"""
SPOIL = {
    "nan": f"replace(body, '\"metadata\":{{}}', '\"metadata\":' || {NAN_METADATA})",
    "broken json": "'{\"item_id\": '",
}

Spoil = Callable[[str], Awaitable[None]]


@pytest.fixture(params=["sqlite", "postgres"])
async def stores_and_spoil(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Stores, Spoil]]:
    """Durable stores, and a function that runs an ``UPDATE`` on their database behind them."""
    if request.param == "sqlite":
        stores = sqlite.open_stores(tmp_path / "poisoned.db")
        sqlite_db: Database = stores.episodic.database  # type: ignore[attr-defined]

        async def spoil(statement: str) -> None:
            def run(connection: sqlite3.Connection) -> None:
                connection.execute(statement)

            await sqlite_db.write(run, store="test")

    else:
        dsn = request.getfixturevalue("postgres_dsn")
        stores = postgres.open_stores(dsn, schema=request.getfixturevalue("postgres_schema"))
        postgres_db: PostgresDatabase = stores.episodic.database  # type: ignore[attr-defined]

        async def spoil(statement: str) -> None:
            await postgres_db.execute(statement, store="test")

    yield stores, spoil
    await stores.aclose()


def memory(item_id: str, content: str, tenant: Tenant = ALICE) -> MemoryItem:
    return MemoryItem(
        item_id=item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        content=content,
        created_at=FIXED_NOW,
        thread_id="t",
        position=int(item_id[-1]),
    )


def said(item_id: str, content: str, tenant: Tenant = ALICE) -> ConversationTurn:
    return ConversationTurn(
        item_id=item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        session_id="s1",
        role=Role.USER,
        content=content,
        created_at=FIXED_NOW,
    )


@pytest.mark.parametrize("how", sorted(SPOIL))
async def test_a_poisoned_memory_is_skipped_by_search_get_and_around(
    stores_and_spoil: tuple[Stores, Spoil], how: str
) -> None:
    """Search, get and around return every other item; another user never notices."""
    stores, spoil = stores_and_spoil
    await stores.episodic.put_many(
        [
            memory("m1", "kiwi harvest notes"),
            memory("m2", "kiwi prices rising"),
            memory("m3", "kiwi shipping delayed"),
            memory("b1", "kiwi orchard for bob", BOB),
        ]
    )
    await spoil(f"UPDATE episodic_items SET body = {SPOIL[how]} WHERE item_id = 'm2'")
    query = MemoryQuery(text="kiwi", limit=10, now=FIXED_NOW)
    found = {hit.item.item_id for hit in await stores.episodic.search(ALICE, query)}
    assert found == {"m1", "m3"}
    assert [i.item_id for i in await stores.episodic.get(ALICE, ["m1", "m2", "m3"])] == [
        "m1",
        "m3",
    ]
    neighbours = await stores.episodic.around(ALICE, ["m1"], radius=2, now=FIXED_NOW)
    assert [i.item_id for i in neighbours] == ["m3"]
    assert [h.item.item_id for h in await stores.episodic.search(BOB, query)] == ["b1"]


async def test_a_poisoned_turn_of_the_transcript_is_skipped(
    stores_and_spoil: tuple[Stores, Spoil],
) -> None:
    """``recent`` returns the readable turns around one that cannot be read."""
    stores, spoil = stores_and_spoil
    for n in range(1, 4):
        await stores.conversation.append(said(f"c{n}", f"message {n}"))
    await spoil(f"UPDATE conversation_turns SET body = {SPOIL['broken json']} WHERE item_id = 'c2'")
    assert [t.item_id for t in await stores.conversation.recent(ALICE, limit=10)] == ["c1", "c3"]


async def test_an_unreadable_record_read_alone_is_a_store_error(
    stores_and_spoil: tuple[Stores, Spoil],
) -> None:
    """A single record that cannot be read (the agent's profile) raises StoreError, not a crash."""
    stores, spoil = stores_and_spoil
    await seed(stores, agent_id="agent-1", user_id="alice")
    await spoil(f"UPDATE profiles SET body = {SPOIL['broken json']}")
    with pytest.raises(StoreError, match="a stored record cannot be read"):
        await stores.consciousness.get_profile(ALICE)


async def test_a_turn_over_a_poisoned_memory_keeps_its_episodic_section(
    stores_and_spoil: tuple[Stores, Spoil],
) -> None:
    """The episodic phase ends ok and brings the readable memories: one bad row fails nothing."""
    stores, spoil = stores_and_spoil
    await stores.episodic.put_many(
        [memory("m1", "kiwi harvest notes"), memory("m2", "kiwi prices rising")]
    )
    await spoil(f"UPDATE episodic_items SET body = {SPOIL['nan']} WHERE item_id = 'm2'")
    orchestrator = Orchestrator(stores, clock=fixed_clock, ids=counting_ids())
    request = TurnRequest(
        agent_id="agent-1", user_id="alice", session_id="s1", user_input="kiwi harvest?"
    )
    result = await orchestrator.start_turn(request)
    assert result.trace.phase("episodic").status is PhaseStatus.OK
    recalled = {i for f in result.bundle.fragments for i in f.provenance.item_ids}
    assert "m1" in recalled
    assert "m2" not in recalled
