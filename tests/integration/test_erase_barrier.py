"""Erase is a barrier: nothing of a user's work begun before it lands after it, on every backend.

Each race runs for N users of one agent: a turn (and its exchange), then
``erase`` at once, while the work behind it is in flight (an extraction, a
turn's writes behind it on slow stores); ``wait_background`` lets whatever
was left run. Then no store may hold anything of any of those users, and
the bystander keeps everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.errors import NotFoundError
from prefrontal.exchange import ExchangeView, Extracted
from prefrontal.memory.fence import TenantFence
from prefrontal.stores import FrontalQuery, MemoryQuery, SessionKey, Tenant, TraceQuery
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.testing import DelayedStore

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
USERS = 5
AGENT = "atlas"


class SlowExtractor:
    """Takes ``seconds``, then finds one fact holding the user's input."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def __call__(self, exchange: ExchangeView) -> Sequence[Extracted]:
        await anyio.sleep(self.seconds)
        return [Extracted(content=f"marker fact: {exchange.user_input}")]


def ask(user: str) -> TurnRequest:
    return TurnRequest(
        agent_id=AGENT, user_id=user, session_id="s1", user_input=f"marker {user} wants tea"
    )


async def held(stores: Stores, tenant: Tenant) -> dict[str, int]:
    """How many records of ``tenant`` each store kind returns (only kinds with some)."""
    now = T0 + timedelta(days=1)
    key = SessionKey(agent_id=tenant.agent_id, user_id=tenant.user_id, session_id="s1")
    query = MemoryQuery(text="marker", limit=100, now=now)
    counts = {
        "episodic": len(await stores.episodic.search(tenant, query)),
        "semantic": len(await stores.semantic.search(tenant, query)),
        "conversation": len(await stores.conversation.recent(tenant, limit=100)),
        "frontal_cortex": len(await stores.frontal_cortex.query(tenant, FrontalQuery())),
        "session": int(await stores.working_memory.load(key) is not None),
        "traces": len(
            await stores.traces.list(TraceQuery(agent_id=tenant.agent_id, user_id=tenant.user_id))
        ),
    }
    return {kind: n for kind, n in counts.items() if n}


async def test_an_extraction_in_flight_never_lands_after_erase(stores: Stores) -> None:
    """start_turn, end_turn, erase, wait_background: 0 of N users come back; the bystander stays."""
    orchestrator = Orchestrator(stores, clock=lambda: T0, extractor=SlowExtractor(0.05))
    async with orchestrator:
        bystander = await orchestrator.start_turn(ask("zoe"))
        await orchestrator.end_turn(bystander, "Noted, zoe.")
        cancelled = 0
        for n in range(USERS):
            result = await orchestrator.start_turn(ask(f"u{n}"))
            await orchestrator.end_turn(result, "Tea it is.")
            report = await orchestrator.memory.erase(AGENT, f"u{n}")
            cancelled += report.cancelled.get("extraction", 0)
        await orchestrator.wait_background()
        back = {
            n: await held(stores, Tenant(agent_id=AGENT, user_id=f"u{n}")) for n in range(USERS)
        }
        assert {n: left for n, left in back.items() if left} == {}
        assert cancelled == USERS
        zoe = await held(stores, Tenant(agent_id=AGENT, user_id="zoe"))
        assert zoe["semantic"] == 1  # the bystander's own extraction landed
        assert zoe["traces"] == 1


async def test_writes_behind_a_turn_on_slow_stores_never_land_after_erase(stores: Stores) -> None:
    """With slow trace and buffer stores, a turn's writes in flight are cancelled by erase."""
    slow = stores.replace(
        traces=DelayedStore(stores.traces, 0.05),
        working_memory=DelayedStore(stores.working_memory, 0.05, methods=("save",)),
    )
    async with Orchestrator(slow, clock=lambda: T0) as orchestrator:
        reports = []
        for n in range(USERS):
            await orchestrator.start_turn(ask(f"u{n}"))
            reports.append(await orchestrator.memory.erase(AGENT, f"u{n}"))
        await orchestrator.wait_background()
        back = {
            n: await held(stores, Tenant(agent_id=AGENT, user_id=f"u{n}")) for n in range(USERS)
        }
    assert {n: left for n, left in back.items() if left} == {}
    assert [r.cancelled for r in reports] == [{"turn_writes": 1}] * USERS


async def test_end_turn_of_a_turn_begun_before_erase_writes_nothing(stores: Stores) -> None:
    """A turn started before its user was erased cannot be ended after: nothing is written."""
    async with Orchestrator(stores, clock=lambda: T0) as orchestrator:
        result = await orchestrator.start_turn(ask("u0"))
        await orchestrator.memory.erase(AGENT, "u0")
        with pytest.raises(NotFoundError, match="erased"):
            await orchestrator.end_turn(result, "Tea it is.")
        await orchestrator.wait_background()
        assert await held(stores, Tenant(agent_id=AGENT, user_id="u0")) == {}
        durable = not isinstance(stores.episodic, InMemoryMemoryStore)
        assert await orchestrator.memory.readmit(AGENT, "u0") is durable  # a record was kept
        again = await orchestrator.start_turn(ask("u0"))  # readmitted, a new turn is the user's
        assert (await orchestrator.end_turn(again, "Welcome back.")).written


async def test_erase_waits_for_a_memory_write_in_flight() -> None:
    """A remember begun before erase ends before anything is removed, so it is removed too."""
    base = Stores.in_memory()
    stores = base.replace(semantic=DelayedStore(base.semantic, 0.05, methods=("put",)))
    orchestrator = Orchestrator(stores, clock=lambda: T0)
    tenant = Tenant(agent_id=AGENT, user_id="u0")
    async with anyio.create_task_group() as group:
        group.start_soon(orchestrator.memory.remember, tenant, "marker slow write")
        await anyio.sleep(0.01)
        report = await orchestrator.memory.erase(AGENT, "u0")
    assert report.removed["semantic"] == 1
    assert await held(stores, tenant) == {}


async def test_work_begun_during_an_erase_waits_for_it_and_then_runs() -> None:
    """The fence: a ticket taken while an erase runs waits for it, then runs as new work."""
    fence = TenantFence()
    tenant = Tenant(agent_id=AGENT, user_id="u0")
    order: list[str] = []

    async def write() -> None:
        order.append("write")

    async with anyio.create_task_group() as group, fence.erasing(tenant):
        ticket = fence.ticket(tenant, "remember")
        group.start_soon(ticket.run, write)
        await anyio.sleep(0.01)
        order.append("erased")
    assert order == ["erased", "write"]
    assert fence.epoch(tenant) == 1


def cached_texts() -> str:
    """Every text and object the registered in-process caches hold, as one string."""
    from prefrontal.forgetting import _CACHES

    held = []
    for cache in list(_CACHES):
        held.append(repr(list(getattr(cache, "_results", {}).keys())))
        entries = getattr(cache, "_entries", {})  # a mapping, or a list of (key, value) pairs
        held.append(repr(list(entries.values() if isinstance(entries, dict) else entries)))
    return "".join(held)


async def test_erase_empties_the_in_process_caches() -> None:
    """A turn caches the user's text (token counts, terms, fragments); after erase none holds it."""
    stores = Stores.in_memory()
    async with Orchestrator(stores, clock=lambda: T0) as orchestrator:
        tenant = Tenant(agent_id=AGENT, user_id="u0")
        await orchestrator.memory.remember(tenant, "qzcachedmark likes green tea")
        result = await orchestrator.start_turn(ask("u0"))
        assert "qzcachedmark" in result.bundle.text
        assert "qzcachedmark" in cached_texts()
        await orchestrator.memory.erase(AGENT, "u0")
        assert "qzcachedmark" not in cached_texts()
