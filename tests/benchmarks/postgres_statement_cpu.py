"""PostgreSQL's CPU per statement of a turn: the growing conversation's last turns replayed.

    python -m tests.benchmarks.postgres_statement_cpu                 # this checkout
    PYTHONPATH=/tmp/old/src:. python -m tests.benchmarks.postgres_statement_cpu  # another

The growing conversation of :mod:`tests.benchmarks.growing_turn` (``--turns``, 300) runs
on a fresh database of the tests' throwaway server; every statement the
stores send during the last ``--last`` (60) turns is recorded with its
arguments by the driver's query loggers
(:func:`tests.postgres_statements.logged_statements`; transaction control and
settings aside). At the end, each is
sent again ``--repeats`` (3) times on one connection of its own, each in a
transaction rolled back (so a write is measured and leaves nothing), and
that backend's CPU (``/proc``, user and system) is added up per statement
text. It prints one JSON line: the CPU a turn in all and per statement
(ms), the statements a turn, the load. A replay runs on the last turn's
tables (every row of the conversation) and a write may take another path
than it took (a conflict, say): the figures rank the statements, they do
not time a turn. ``/proc`` counts CPU in clock ticks (10 ms), so each
statement's figure is a sum of whole ticks: two runs of one checkout
differ by about 5% in all. Figures are reported, never asserted.
"""

from __future__ import annotations

import argparse
import collections
import json
import os

from tests.benchmarks.growing_turn import Ticking, continuing
from tests.benchmarks.process_cpu import TICKS
from tests.postgres_statements import Statement

SKIPPED = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "SET", "RESET")
"""Statements never replayed: transaction control and settings."""


def backend_cpu_ms(pid: int) -> float:
    """User and system CPU of process ``pid`` (ms)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1e3 / TICKS


async def conversation(dsn: str, turns: int, last: int) -> list[Statement]:
    """Run the growing conversation on ``dsn``: the statements of its last ``last`` turns
    (transaction control and settings aside), as the driver logged them
    (:func:`tests.postgres_statements.logged_statements`)."""
    import anyio

    from prefrontal import Orchestrator, OrchestratorConfig
    from prefrontal.demo import seed
    from prefrontal.stores import postgres
    from prefrontal.testing.synthetic import questions
    from tests.postgres_statements import logged_statements

    with logged_statements() as sent:
        stores = postgres.open_stores(dsn)
        await stores.open()
        await seed(stores)
        parents: dict[str, str] = {}
        config = OrchestratorConfig(deadline_ms=60_000)
        first = 0
        async with Orchestrator(stores, config, clock=Ticking()) as orchestrator:
            for number, text in enumerate(questions(turns)):
                if number == turns - last:
                    await (
                        anyio.lowlevel.checkpoint()
                    )  # the last turn's records handed to the logger
                    first = len(sent)
                session = f"growing-{number * 16 // turns}"
                request = continuing(session, text, parents)
                result = await orchestrator.start_turn(request)
                reply = f"Answer {number}: Lena signs the payment review off on Friday."
                await orchestrator.end_turn(result, reply)
                await orchestrator.wait_background()
                parents[session] = result.context.turn_id
        await anyio.lowlevel.checkpoint()
        kept = [s for s in sent[first:] if not s.query.lstrip().upper().startswith(SKIPPED)]
        await stores.aclose()
    return kept


async def replay(dsn: str, sent: list[Statement], repeats: int) -> tuple[dict[str, float], int]:
    """Send each of ``sent`` ``repeats`` times, each in a rolled-back transaction, on the
    stores' schema: the backend's CPU per SQL text (ms, all repeats) and the failures."""
    import asyncpg

    connection = await asyncpg.connect(dsn)
    schema = await connection.fetchval(
        "SELECT n.nspname FROM pg_namespace AS n JOIN pg_class AS c ON c.relnamespace = n.oid"
        " WHERE c.relname = 'episodic_items'"
    )
    await connection.execute(f'SET search_path = "{schema}"')
    pid = await connection.fetchval("SELECT pg_backend_pid()")
    spent: dict[str, float] = collections.defaultdict(float)
    failed = 0
    for _ in range(repeats):
        for statement in sent:
            query, args = statement.query, statement.args
            transaction = connection.transaction()
            await transaction.start()
            try:
                before = backend_cpu_ms(pid)
                if statement.many:
                    await connection.executemany(query, args)
                else:
                    await connection.fetch(query, *args)
                spent[query] += backend_cpu_ms(pid) - before
            except asyncpg.PostgresError:
                failed += 1
            finally:
                await transaction.rollback()
    await connection.close()
    return spent, failed


def main(argv: list[str] | None = None) -> None:
    import anyio

    from tests.postgres_server import running_server

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--last", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    with running_server() as server:
        dsn = server.create_database("statement_cpu")
        sent = anyio.run(conversation, dsn, args.turns, args.last)
        spent, failed = anyio.run(replay, dsn, sent, args.repeats)
    calls = collections.Counter(statement.query for statement in sent)
    per_turn = args.repeats * args.last
    ranked = sorted(spent.items(), key=lambda item: -item[1])[: args.top]
    figures = {
        "cpu_ms_per_turn": round(sum(spent.values()) / per_turn, 2),
        "statements_per_turn": round(len(sent) / args.last, 1),
        "failed_replays": failed,
        "top": [
            {
                "cpu_ms_per_turn": round(ms / per_turn, 2),
                "calls_per_turn": round(calls[query] / args.last, 2),
                "sql": " ".join(query.split())[:120],
            }
            for query, ms in ranked
        ],
        "load": round(os.getloadavg()[0], 1),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
