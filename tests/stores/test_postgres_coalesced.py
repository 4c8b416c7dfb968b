"""Single-statement writes begun together reach PostgreSQL as one statement, each still its own.

Writes to different tables begun in one pass of the event loop are sent as
one statement; two to one table never are (they might change the same
rows); when the joined statement fails, each write is sent again alone, so
the others are written and the failing one raises its own error.
"""

from __future__ import annotations

import re

import anyio
import pytest

from prefrontal.errors import StoreError
from prefrontal.stores import Tenant, postgres
from prefrontal.stores.postgres.coalesced import (
    Coalescer,
    joined,
    renumbered,
    returns_rows,
    target,
)
from prefrontal.stores.postgres.database import PostgresDatabase
from prefrontal.testing.synthetic import memories
from tests.conftest import FIXED_NOW
from tests.postgres_statements import counted_statements

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="agent", user_id="user")
PUT = "INSERT INTO profiles (agent_id, body) VALUES ($1, $2)"


def test_only_writes_returning_nothing_may_join() -> None:
    """INSERT, UPDATE and DELETE name their table; a read or a RETURNING write joins nothing."""
    assert target(" INSERT INTO traces (a) VALUES ($1)") == "traces"
    assert target("UPDATE episodic_items AS m SET x = $1") == "episodic_items"
    assert target("DELETE FROM wm_sessions WHERE a = $1") == "wm_sessions"
    assert target("UPDATE t SET a = $1 RETURNING a") is None
    assert target("SELECT pg_advisory_xact_lock($1)") is None


def test_joined_renumbers_the_parameters() -> None:
    """Each write's parameters follow the previous writes' in the joined statement."""
    statement, args = joined([("UPDATE a SET x = $1 WHERE y = $2", (1, 2)), (PUT, ("p", "q"))])
    assert "w0 AS (UPDATE a SET x = $1 WHERE y = $2)" in statement
    assert "w1 AS (INSERT INTO profiles (agent_id, body) VALUES ($3, $4))" in statement
    assert args == [1, 2, "p", "q"]


@pytest.mark.parametrize("seed", range(5))
def test_renumbering_and_returning_read_the_statement_as_the_regular_expressions_do(
    seed: int,
) -> None:
    """renumbered and returns_rows give what a substitution of each ``$n`` and a case-blind
    search for the word RETURNING give, over statements of parameters, words and case mixed."""
    import functools
    import random

    rng = random.Random(seed)
    pieces = ["$1", "$12", "$3", " RETURNING ", "returning", "xreturning", "ReTuRnInG ", "$",
              "a = ", "(", ")", ", ", "'$9'", "\n", "é", "—", "ſ", "2"]  # fmt: skip
    for _ in range(300):
        statement = "".join(rng.choices(pieces, k=rng.randint(0, 30)))
        offset = rng.choice([0, 1, 7, 40])
        expected = re.sub(r"\$(\d+)", functools.partial(_moved, offset=offset), statement)
        assert renumbered(statement, offset) == expected
        found = re.search(r"\bRETURNING\b", statement, re.I) is not None
        assert returns_rows(statement) is found


def _moved(found: re.Match[str], offset: int) -> str:
    return f"${int(found.group(1)) + offset}"


async def test_writes_begun_together_are_one_statement(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """A turn's recall counters of both memory stores and its trace's row: one statement."""
    with counted_statements() as sent:
        stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
        try:
            items = list(memories(4, tenant=TENANT))
            await stores.episodic.put_many(items[:2])
            await stores.semantic.put_many(items[2:])
            before = len(sent)
            async with anyio.create_task_group() as group:
                group.start_soon(
                    stores.episodic.record_recall, TENANT, [items[0].item_id], FIXED_NOW
                )
                group.start_soon(
                    stores.semantic.record_recall, TENANT, [items[2].item_id], FIXED_NOW
                )
            joined_writes = sent[before:]
            got = await stores.episodic.get(TENANT, [items[0].item_id])
            also = await stores.semantic.get(TENANT, [items[2].item_id])
        finally:
            await stores.aclose()
    assert len(joined_writes) == 1 and joined_writes[0].lstrip().startswith("WITH w0 AS")
    assert got[0].recall_count == 1 and also[0].recall_count == 1


async def test_two_writes_to_one_table_are_never_joined(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Two recalls of one item begun together both count: two statements, not one."""
    with counted_statements() as sent:
        stores = postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=2)
        try:
            item = next(iter(memories(1, tenant=TENANT)))
            await stores.episodic.put_many([item])
            before = len(sent)
            async with anyio.create_task_group() as group:
                for _ in range(2):
                    group.start_soon(
                        stores.episodic.record_recall, TENANT, [item.item_id], FIXED_NOW
                    )
            written = sent[before:]
            got = await stores.episodic.get(TENANT, [item.item_id])
        finally:
            await stores.aclose()
    assert len(written) == 2
    assert got[0].recall_count == 2


async def test_a_failing_write_fails_alone(postgres_dsn: str, postgres_schema: str) -> None:
    """Of two writes begun together, the one that fails raises; the other is written."""
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema, max_size=2)
    try:
        await database.execute(PUT, "taken", "{}", store="test")  # opens and migrates
        failed: list[BaseException] = []

        async def put(agent: str) -> None:
            try:
                await database.execute(PUT, agent, "{}", store="test")
            except StoreError as error:
                failed.append(error)

        async def summary() -> None:
            await database.execute(
                "INSERT INTO conversation_summaries (agent_id, user_id, body) VALUES ($1, $2, $3)",
                "agent",
                "user",
                '{"x": 1}',
                store="test",
            )

        async with anyio.create_task_group() as group:
            group.start_soon(put, "taken")  # the primary key is taken: fails
            group.start_soon(summary)
        async with database._pool.acquire() as connection:
            stored = await connection.fetchval(
                "SELECT count(*) FROM conversation_summaries WHERE agent_id = 'agent'"
            )
    finally:
        await database.aclose()
    assert len(failed) == 1
    assert stored == 1


async def test_waves_of_writes_are_each_written_once(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Writes beginning while others' joined statement is in flight: every one written, no
    error (a leader never takes another's batch)."""
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema, max_size=4)
    tables = ("profiles", "conversation_summaries")
    try:
        await database.execute(PUT, "warm", "{}", store="test")

        async def writer(n: int) -> None:
            for k in range(8):
                if (n + k) % 2:
                    await database.execute(PUT, f"agent-{n}-{k}", "{}", store="test")
                else:
                    await database.execute(
                        "INSERT INTO conversation_summaries (agent_id, user_id, body)"
                        " VALUES ($1, $2, $3)",
                        f"agent-{n}",
                        f"user-{k}",
                        "{}",
                        store="test",
                    )

        async with anyio.create_task_group() as group:
            for n in range(12):
                group.start_soon(writer, n)
        async with database._pool.acquire() as connection:
            counts = [
                await connection.fetchval(f"SELECT count(*) FROM {t} WHERE agent_id <> 'warm'")
                for t in tables
            ]
    finally:
        await database.aclose()
    assert counts == [48, 48]


async def test_a_joined_statement_is_sent_once_when_its_sender_is_cancelled() -> None:
    """Cancelling the write that sends a joined statement waits for that statement and sends
    nothing again: the other writes in it are neither lost nor written twice."""
    sent: list[str] = []
    started = anyio.Event()

    async def send(statement: str, args: object) -> None:
        sent.append(statement)
        started.set()
        await anyio.sleep(0.05)

    coalescer = Coalescer()
    leader_cancelled = False
    followers_done = 0
    statements = [f"UPDATE t{n} SET x = $1" for n in range(3)]

    async def lead(scope: anyio.CancelScope) -> None:
        nonlocal leader_cancelled
        with scope:
            await coalescer.execute(statements[0], [1], send)
        leader_cancelled = scope.cancelled_caught

    async def follow(statement: str) -> None:
        nonlocal followers_done
        await coalescer.execute(statement, [1], send)
        followers_done += 1

    scope = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        group.start_soon(lead, scope)
        for statement in statements[1:]:
            group.start_soon(follow, statement)
        await started.wait()
        scope.cancel()
    assert len(sent) == 1 and sent[0].startswith("WITH ")
    assert leader_cancelled and followers_done == 2
