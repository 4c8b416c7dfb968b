"""PostgreSQL writes an exchange in four round trips: its writes after the positions in one statement.

``BEGIN``, the turn's trace locked with the thread's last position (the
thread's lock taken first, :mod:`prefrontal.stores.postgres.thread_positions`),
one statement writing the memory, the messages (in order), the
summary, the session state and the trace (each a ``WITH`` of its own), and
``COMMIT``. Each write is the store's own statement, so what is stored is
what the writes one by one stored (the integration tests of ``end_turn``
run on PostgreSQL too: conflicts, retries, cancellation); here, the round
trips and what one statement answers for each write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from prefrontal import Stores
from prefrontal.stores import Tenant, postgres
from prefrontal.stores.postgres.exchange import together
from tests.endturn_support import AGENT, USER, ask, build
from tests.postgres_statements import counted_statements
from tests.stores.test_postgres_statements import introspection

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id=AGENT, user_id=USER)


@pytest.fixture
async def stores(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[Stores]:
    opened = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
    yield opened
    await opened.aclose()


async def test_an_exchange_is_four_round_trips_and_keeps_its_order(stores: Stores) -> None:
    """Each end_turn's transaction sends four statements, its writes joined in one (asyncpg's
    questions about a type, once per connection, not counted); the messages are read back in
    the order they were said, the summary and state saved."""
    orchestrator = build(stores, conversation={"recent_turns": 2})
    parent: str | None = None
    with counted_statements() as sent:
        for number in range(4):
            result = await orchestrator.start_turn(ask(f"Question {number}.", parent))
            parent = result.context.turn_id
            before = len(sent)
            await orchestrator.end_turn(result, f"Answer {number}.")
            statements = [s.strip() for s in sent[before:] if not introspection(s)]
            begin = statements.index("BEGIN ISOLATION LEVEL READ COMMITTED;")
            written = statements[begin : statements.index("COMMIT;", begin) + 1]
            assert len(written) == 4, [w[:60] for w in written]
            assert "episodic_thread_last(" in written[1]
            joined = written[2]
            for table in ("episodic_items", "conversation_turns", "traces", "wm_sessions"):
                assert f"INSERT INTO {table}" in joined or f"UPDATE {table}" in joined, table
    recent = await stores.conversation.recent(TENANT, limit=8)
    said = [turn.content for turn in recent]
    assert said[-2:] == ["Question 3.", "Answer 3."]
    assert said[-4:-2] == ["Question 2.", "Answer 2."]
    summary = await stores.conversation.get_summary(TENANT)
    assert summary is not None


def test_together_answers_each_write_in_its_column() -> None:
    """One statement of the writes, their parameters renumbered in order; a write returning
    rows is answered by their count, one returning none by 0."""
    statement, *args = together(
        [
            ("INSERT INTO a (x) VALUES ($1)", ("one",)),
            ("UPDATE b SET y = $1 WHERE z = $2 RETURNING 1", (2, "three")),
        ]
    )
    assert statement == (
        "WITH w0 AS (INSERT INTO a (x) VALUES ($1)), "
        "w1 AS (UPDATE b SET y = $2 WHERE z = $3 RETURNING 1) "
        "SELECT 0, (SELECT count(*) FROM w1)"
    )
    assert args == ["one", 2, "three"]
