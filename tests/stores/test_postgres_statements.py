"""The statements a turn sends to PostgreSQL, counted at the driver (:mod:`tests.postgres_statements`).

A turn in a growing conversation (start, end and the background work), once
the pool's connections are warm, sends at most :data:`TURN_BOUND` statements; reads that need no snapshot of
their own send no ``BEGIN``/``COMMIT``, a write of one statement none
either, and a connection goes back to the pool without a reset query.
"""

from __future__ import annotations

import pytest

from prefrontal import Orchestrator, OrchestratorConfig
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.stores import Stores, Tenant, postgres
from prefrontal.testing.synthetic import questions
from prefrontal.traces.models import TurnStatus
from tests.benchmarks.growing_turn import continuing
from tests.conftest import FIXED_NOW, ticking_clock
from tests.postgres_statements import counted_statements

pytestmark = pytest.mark.anyio

TURN_BOUND = 21
"""Statements a turn (start and end) may send at most (12 to 14 here): the turn's state read in
one statement when it starts, four of its six memory searches one statement each (each store's
search after its probe is answered by the probe's statement), the exchange's prior reads one,
its writes four. 19 to 23 when the exchange's writes were a statement each,
44 to 57 when each state read and each search step was a statement of its own, 90 to 108
when every read had its transaction and every release its reset."""

TURNS, SESSIONS, WARM = 16, 4, 4
"""The conversation; its first WARM turns are not bounded: each new pooled connection first asks
the server about the types it meets (asyncpg's introspection, three statements, once per
connection), and the pool's connections open in those turns."""


def introspection(statement: str) -> bool:
    """One of asyncpg's statements asking the server about types, once per pooled connection
    (its first use of a type): a connection the pool opens late sends them in a later turn."""
    words = " ".join(statement.split())
    return "typeinfo_tree" in words or words.startswith(
        ("SELECT current_setting('jit')", "SELECT set_config('jit'")
    )


async def _conversation(stores: Stores) -> list[tuple[int, list[str]]]:
    """Run :data:`TURNS` turns over :data:`SESSIONS` sessions of the demo user, each turn ended
    and its background work awaited; each turn's status and statements."""
    parents: dict[str, str] = {}
    turns: list[tuple[int, list[str]]] = []
    config = OrchestratorConfig(deadline_ms=60_000)
    with counted_statements() as sent:
        await seed(stores)  # the pool opens here, inside the count
        async with Orchestrator(stores, config, clock=ticking_clock(FIXED_NOW)) as orchestrator:
            for number, text in enumerate(questions(TURNS, seed=51)):
                session = f"counted-{number * SESSIONS // TURNS}"
                before = len(sent)
                request = continuing(session, text, parents)
                result = await orchestrator.start_turn(request)
                assert result.trace.status is TurnStatus.OK, result.warnings
                await orchestrator.end_turn(result, f"Answer {number}: the review is on Friday.")
                await orchestrator.wait_background()
                parents[session] = result.context.turn_id
                turns.append((number, sent[before:]))
    return turns


async def test_a_turn_sends_at_most_the_bound(postgres_dsn: str, postgres_schema: str) -> None:
    """Each turn of a growing conversation, start and end, sends at most TURN_BOUND statements."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=4)
    try:
        turns = await _conversation(stores)
    finally:
        await stores.aclose()
    counts = [
        len([s for s in statements if not introspection(s)])
        for number, statements in turns
        if number >= WARM
    ]
    assert len(counts) == TURNS - WARM
    assert min(counts) > 0
    assert max(counts) <= TURN_BOUND, (counts, [t for _, t in turns if len(t) > TURN_BOUND])


async def test_no_statement_is_ceremony(postgres_dsn: str, postgres_schema: str) -> None:
    """No read opens a transaction (a lexical search of few holders is one statement, a
    snapshot by itself) and no released connection is reset."""
    stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=4)
    try:
        turns = await _conversation(stores)
    finally:
        await stores.aclose()
    sent = [" ".join(s.split()) for _, statements in turns for s in statements]
    assert sent
    assert not [s for s in sent if "RESET ALL" in s]
    assert not [s for s in sent if s.startswith("BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY")]
    assert not [s for s in sent if s.startswith("BEGIN ISOLATION LEVEL REPEATABLE READ")]
    assert any(s.startswith("BEGIN ISOLATION LEVEL READ COMMITTED") for s in sent)  # the exchange


async def test_the_counter_sees_each_statement(postgres_dsn: str, postgres_schema: str) -> None:
    """One profile read is one statement; one single-statement write is one statement."""
    tenant = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
    with counted_statements() as sent:
        stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=1)
        try:
            await stores.consciousness.get_profile(tenant)  # opens and migrates the schema
            before = len(sent)
            await stores.consciousness.get_profile(tenant)
            read = sent[before:]
            before = len(sent)
            await stores.traces.erase(tenant)
            written = sent[before:]
        finally:
            await stores.aclose()
    assert [s.split()[0] for s in read] == ["SELECT"]
    assert [s.split()[0] for s in written] == ["DELETE"]
