"""A turn's repeated lexical search on PostgreSQL: sent once, its answer given once more, never stale.

In a turn (begun by ``prefetch_turn``, as phase 1 begins it) a lexical
search whose answer holds every candidate is kept: the same search again
(same tenant, terms, time and kinds, any limit: a probe of 3 hits, then the
phase's search of 100) is answered from it with no statement (once: a third
is sent), and equals a search of the database. A write through the database in between, another
tenant, other kinds or an answer of the best rows only (terms held by more
items than are all sent) send the search again; outside a turn every search
is sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.stores import MemoryItem, MemoryKind, MemoryQuery, Stores, Tenant, postgres
from prefrontal.stores.postgres import lexical_search
from prefrontal.stores.working_memory import SessionKey
from tests.conftest import FIXED_NOW
from tests.postgres_statements import counted_statements

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
BOB = Tenant(agent_id=DEMO_AGENT, user_id="bob")
AT = FIXED_NOW + timedelta(minutes=1)
TEXT = "what is left on the payment review and the launch"

sent: list[str] = []


@pytest.fixture
async def stores(postgres_dsn: str, postgres_schema: str) -> Any:
    global sent
    with counted_statements() as sent:
        opened = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
        await seed(opened)  # the demo agent's episodes and facts
        await _searched(opened, ALICE, _query(3))  # each connection's types introspected
        yield opened
        await opened.aclose()


async def _in_turn(stores: Stores, body: Callable[[], Awaitable[Any]]) -> tuple[Any, int]:
    """Run ``body`` in a context of its own after a turn's prefetch: what it returned and the
    statements it sent."""
    found: list[Any] = []

    async def run() -> None:
        key = SessionKey(agent_id=ALICE.agent_id, user_id=ALICE.user_id, session_id="s1")
        prefetch = stores.working_memory.prefetch_turn  # type: ignore[attr-defined]
        await prefetch(key, parent_turn_id=None, now=AT, seconds=30.0)
        await anyio.lowlevel.checkpoint()  # the prefetch's statements logged
        before = len(sent)
        value = await body()
        await anyio.lowlevel.checkpoint()
        found.append((value, len(sent) - before))

    async with anyio.create_task_group() as group:  # a child task: a context of its own
        group.start_soon(run)
    return found[0]  # type: ignore[no-any-return]


def _query(limit: int, kinds: tuple[MemoryKind, ...] | None = None) -> MemoryQuery:
    return MemoryQuery(text=TEXT, limit=limit, now=AT, kinds=kinds)


def _hits(found: Any) -> list[tuple[str, float, dict[str, float]]]:
    return [(hit.item.item_id, hit.score, hit.signals) for hit in found]


async def _direct(stores: Stores, tenant: Tenant, query: MemoryQuery) -> Any:
    return {
        name: _hits(await getattr(stores, name).search(tenant, query))
        for name in ("episodic", "semantic")
    }


async def _searched(stores: Stores, tenant: Tenant, *queries: MemoryQuery) -> Any:
    return [await _direct(stores, tenant, query) for query in queries]


async def test_a_probe_then_the_search_sends_one_statement_each_store(stores: Stores) -> None:
    """Limit 3, then 100, in one turn: one statement a store, and the hits of the database."""
    found, statements = await _in_turn(
        stores, lambda: _searched(stores, ALICE, _query(3), _query(100))
    )
    probe, search = found
    assert statements == 2
    assert probe == await _direct(stores, ALICE, _query(3))
    assert search == await _direct(stores, ALICE, _query(100))
    assert len(search["episodic"]) > 3 and len(search["semantic"]) > 3
    before = len(sent)
    await _searched(stores, ALICE, _query(3), _query(100))  # outside a turn: each sent
    await anyio.lowlevel.checkpoint()
    assert len(sent) - before == 4


async def test_a_kept_answer_is_given_once(stores: Stores) -> None:
    """The same search a third time in one turn is sent again (the answer kept was given to
    the second and forgotten), and all three have the hits of the database."""
    found, statements = await _in_turn(
        stores, lambda: _searched(stores, ALICE, _query(3), _query(100), _query(100))
    )
    probe, search, again = found
    assert statements == 4
    assert probe == await _direct(stores, ALICE, _query(3))
    assert search == again == await _direct(stores, ALICE, _query(100))


async def test_a_write_between_sends_the_search_again(stores: Stores) -> None:
    """An item written after the probe is among the search's hits."""
    item = MemoryItem(
        item_id="new",
        agent_id=DEMO_AGENT,
        user_id=DEMO_USER,
        kind=MemoryKind.FACT,
        content="The payment review launch is left: payment review, launch, payment review.",
        created_at=FIXED_NOW,
    )

    async def body() -> Any:
        probe = await _direct(stores, ALICE, _query(3))
        await stores.semantic.put(item)
        return probe, await _direct(stores, ALICE, _query(100))

    (probe, search), _ = await _in_turn(stores, body)
    assert "new" not in [hit[0] for hit in probe["semantic"]]
    assert search == await _direct(stores, ALICE, _query(100))
    assert "new" in [hit[0] for hit in search["semantic"]]


async def test_another_tenant_or_other_kinds_are_sent(stores: Stores) -> None:
    """Bob's search and a search of other kinds, after Alice's, each send a statement."""
    events = (MemoryKind.EVENT,)

    async def body() -> Any:
        await _searched(stores, ALICE, _query(3))
        await anyio.lowlevel.checkpoint()
        before = len(sent)
        found = await _searched(stores, BOB, _query(100))
        found += await _searched(stores, ALICE, _query(100, events))
        await anyio.lowlevel.checkpoint()
        return found, len(sent) - before

    (found, statements), _ = await _in_turn(stores, body)
    assert statements == 4
    assert found == await _searched(stores, BOB, _query(100)) + await _searched(
        stores, ALICE, _query(100, events)
    )


async def test_an_answer_of_the_best_rows_only_is_not_kept(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the statement scores its candidates and sends the best (terms held by more items
    than are all sent), the search with another limit is sent again, and its hits are the
    database's."""
    monkeypatch.setattr(lexical_search, "ALL_SENT", 0)
    found, statements = await _in_turn(
        stores, lambda: _searched(stores, ALICE, _query(3), _query(100))
    )
    assert statements == 4
    assert found == await _searched(stores, ALICE, _query(3), _query(100))
    assert len(found[1]["semantic"]) > 3
