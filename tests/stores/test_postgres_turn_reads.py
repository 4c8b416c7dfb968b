"""A turn's state reads on PostgreSQL: prefetched in one statement, served once, never stale.

A turn that begins with ``prefetch_turn`` (phase 1 calls it) reads what the
tenant's last turn read, as this turn asks it (its session, parent turn and
clock in place of the last turn's), in one statement; each of the turn's
reads with exactly those parameters is then served from it, once, and
equals a read of the database. A write through the database in between,
another tenant's read or a read outside the turn's context reads the
database.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import anyio
import pytest

from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.stores import Stores, Tenant, postgres
from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.working_memory import SessionKey
from tests.conftest import FIXED_NOW
from tests.postgres_statements import counted_statements

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
BOB = Tenant(agent_id=DEMO_AGENT, user_id="bob")


async def _reads(stores: Stores, tenant: Tenant, session: str, parent: str, at: Any) -> Any:
    """What a turn reads of its state (as the phases ask it), the bodies compared."""
    key = SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id=session)
    profile = await stores.consciousness.get_profile(tenant)
    summary = await stores.conversation.get_summary(tenant)
    recent = await stores.conversation.recent(tenant, limit=8)
    active = await stores.scratch_page.active(tenant, now=at, limit=5)
    state = await stores.working_memory.load(key)
    trace = await stores.traces.get(tenant, parent)
    return (profile, summary, recent, active, state, trace)


async def _in_turn(
    stores: Stores, tenant: Tenant, turn: int, body: Callable[[], Awaitable[Any]]
) -> tuple[int, Any, int]:
    """Run ``body`` in a context of its own after the turn's prefetch (as phase 1 begins it):
    the reads prefetched, what ``body`` returned, the statements it sent."""
    found: list[Any] = []

    async def run() -> None:
        key = SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id=f"s{turn}")
        prefetch = stores.working_memory.prefetch_turn  # type: ignore[attr-defined]
        at = FIXED_NOW + timedelta(minutes=turn)
        fetched = await prefetch(key, parent_turn_id=f"t{turn - 1}", now=at, seconds=30.0)
        before = len(sent)
        found.append((fetched, await body(), len(sent) - before))

    async with anyio.create_task_group() as group:  # a child task: a context of its own
        group.start_soon(run)
    return found[0]  # type: ignore[no-any-return]


@pytest.fixture
async def stores_and_sent(postgres_dsn: str, postgres_schema: str) -> Any:
    global sent
    with counted_statements() as sent:
        stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
        await seed(stores)  # the demo agent's profile, goals, conversation, summary, scratch page
        yield stores
        await stores.aclose()


sent: list[str] = []


def _turn_reads(stores: Stores, tenant: Tenant, turn: int) -> Callable[[], Awaitable[Any]]:
    at = FIXED_NOW + timedelta(minutes=turn)
    return lambda: _reads(stores, tenant, f"s{turn}", f"t{turn - 1}", at)


async def test_the_next_turn_reads_its_state_in_one_statement(stores_and_sent: Stores) -> None:
    """The second turn's six state reads are one statement, and equal reads of the database."""
    stores = stores_and_sent
    first = await _in_turn(stores, ALICE, 1, _turn_reads(stores, ALICE, 1))
    second = await _in_turn(stores, ALICE, 2, _turn_reads(stores, ALICE, 2))
    direct = await _reads(stores, ALICE, "s2", "t1", FIXED_NOW + timedelta(minutes=2))
    assert first[0] == 0 and first[2] == 6
    assert second[0] == 6 and second[2] == 0
    assert second[1] == direct
    profile, summary, recent, active, _, _ = direct
    assert profile is not None and summary is not None and recent and active


async def test_a_write_in_the_turn_is_read_back(stores_and_sent: Stores) -> None:
    """A profile written after the prefetch is what the turn's read of it returns."""
    stores = stores_and_sent
    await _in_turn(stores, ALICE, 1, _turn_reads(stores, ALICE, 1))

    async def write_then_read() -> Any:
        await stores.consciousness.put_profile(AgentProfile(agent_id=DEMO_AGENT, name="Second"))
        return await stores.consciousness.get_profile(ALICE)

    fetched, profile, statements = await _in_turn(stores, ALICE, 2, write_then_read)
    assert fetched == 6
    assert profile is not None and profile.name == "Second"
    assert statements == 2  # the write, then the read


async def test_another_tenants_read_is_never_served(stores_and_sent: Stores) -> None:
    """In Alice's turn, Bob's reads go to the database (all but the agent's profile, the same
    read for every user of the agent) and return his; outside her turn, hers do too."""
    stores = stores_and_sent
    await _in_turn(stores, ALICE, 1, _turn_reads(stores, ALICE, 1))
    fetched, bobs, statements = await _in_turn(stores, ALICE, 2, _turn_reads(stores, BOB, 2))
    assert fetched == 6 and statements == 5
    assert bobs == await _reads(stores, BOB, "s2", "t1", FIXED_NOW + timedelta(minutes=2))
    before = len(sent)
    await _reads(stores, ALICE, "s3", "t2", FIXED_NOW + timedelta(minutes=3))
    assert len(sent) - before == 6
