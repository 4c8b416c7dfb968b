"""PostgreSQL's planner statistics keep no copy of an erased user's text.

The report found 145 copies of an erased user's text readable in
``pg_stats`` (histogram bounds, most common values) after erase and after
``prefrontal erase --vacuum``, until the next ``ANALYZE``. Now no table's
record text (``body``) keeps statistics, and an erase ends by analysing the
tables again (:mod:`prefrontal.stores.postgres.planner_statistics`).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.stores import Tenant
from prefrontal.stores.postgres.planner_statistics import ANALYZE
from tests.stores.postgres_schema import schema_connection

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
AGENT = "atlas"
MARKER = "qz" + "plannermark"
USER = "erasedqzuser"
COPIES = """SELECT count(*) FROM pg_stats AS s
    WHERE s.schemaname = $1 AND strpos(lower(s::text), $2) > 0"""


async def copies(dsn: str, schema: str, text: str) -> int:
    """How many rows of ``pg_stats`` (a column each) of ``schema`` hold ``text``."""
    async with schema_connection(dsn, schema) as connection:
        return int(await connection.fetchval(COPIES, schema, text))


async def analysed(dsn: str, schema: str) -> None:
    """Every table analysed, as autovacuum would once they have changed enough."""
    async with schema_connection(dsn, schema) as connection:
        await connection.execute(ANALYZE)


async def users_work(orchestrator: Orchestrator, user: str, marker: str) -> None:
    """Memories, turns with replies (conversation, traces, working memory) of ``user``."""
    tenant = Tenant(agent_id=AGENT, user_id=user)
    for n in range(6):
        await orchestrator.memory.remember(tenant, f"{marker} fact number {n}")
        request = TurnRequest(
            agent_id=AGENT, user_id=user, session_id="s1", user_input=f"tell me {marker} {n}"
        )
        result = await orchestrator.start_turn(request)
        await orchestrator.end_turn(result, f"Here is {marker} {n}.")
    await orchestrator.wait_background()


async def test_erase_leaves_no_copy_in_the_planner_statistics(
    postgres_stores: Stores, postgres_dsn: str, postgres_schema: str
) -> None:
    """With the tables analysed while the user's records were there, erase leaves neither
    their text nor their id in ``pg_stats``; a bystander's statistics are counted again."""
    async with Orchestrator(postgres_stores, clock=lambda: T0) as orchestrator:
        await users_work(orchestrator, USER, MARKER)
        await users_work(orchestrator, "bystander", "keptqzword")
        await analysed(postgres_dsn, postgres_schema)
        assert await copies(postgres_dsn, postgres_schema, USER) > 0
        assert await copies(postgres_dsn, postgres_schema, MARKER) > 0  # analysed terms
        await orchestrator.memory.erase(AGENT, USER)
    assert await copies(postgres_dsn, postgres_schema, MARKER) == 0
    assert await copies(postgres_dsn, postgres_schema, USER) == 0
    assert await copies(postgres_dsn, postgres_schema, "bystander") > 0


async def test_no_record_text_is_ever_in_the_planner_statistics(
    postgres_stores: Stores, postgres_dsn: str, postgres_schema: str
) -> None:
    """No ``body`` column keeps statistics: analysed, they hold nothing of the records."""
    async with Orchestrator(postgres_stores, clock=lambda: T0) as orchestrator:
        await users_work(orchestrator, "someone", MARKER)
    await analysed(postgres_dsn, postgres_schema)
    async with schema_connection(postgres_dsn, postgres_schema) as connection:
        columns = await connection.fetch(
            "SELECT tablename FROM pg_stats WHERE schemaname = $1 AND attname = 'body'",
            postgres_schema,
        )
    assert columns == []
