"""PostgreSQL's lexical search in one statement: the hits of scoring every match, one round trip.

The corpus of the top-k's conformance test (common and rare words, two
agents, private, shared, expired and superseded items): each search whose
terms are held by few enough items sends exactly one statement, and its
hits, scores, signals and order equal the in-memory store's, whether SQL
scores the candidates and sends the best or sends them all unscored; terms
held by more fall back to the pruned top-k with the same answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from prefrontal.stores import MemoryQuery
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.postgres import PostgresDatabase, PostgresMemoryStore, lexical_search
from tests.conformance.test_postgres_topk import ALICE, BOB, OTHER, corpus, queries
from tests.conftest import FIXED_NOW
from tests.postgres_statements import counted_statements

pytestmark = pytest.mark.anyio


@pytest.fixture
async def database(postgres_dsn: str, postgres_schema: str) -> AsyncIterator[PostgresDatabase]:
    database = PostgresDatabase(postgres_dsn, schema=postgres_schema, max_size=1)
    yield database
    await database.aclose()


async def _compare(
    database: PostgresDatabase, limits: tuple[int, ...], texts: list[str] | None = None
) -> list[int]:
    """Search every tenant with every query (``texts``, else the top-k's) and limit on both
    stores, asserting equal answers (twice: the first pass warms the connection); the
    statements each PostgreSQL search of the second pass sent."""
    sent_per_search: list[int] = []
    compared = 0
    with counted_statements() as sent:  # the pool opens inside the count
        items = corpus(40, seed=11)
        memory, store = InMemoryMemoryStore(), PostgresMemoryStore(database)
        await memory.put_many(items)
        await store.put_many(items)
        for warm in (True, False):
            for tenant in (ALICE, BOB, OTHER):
                for text in queries(15, seed=12) if texts is None else texts:
                    for limit in limits:
                        query = MemoryQuery(text=text, limit=limit, now=FIXED_NOW)
                        expected = await memory.search(tenant, query)
                        before = len(sent)
                        got = await store.search(tenant, query)
                        assert [(h.item.item_id, h.item.user_id, h.score) for h in got] == [
                            (h.item.item_id, h.item.user_id, h.score) for h in expected
                        ], (tenant, text, limit)
                        assert [h.signals for h in got] == [h.signals for h in expected]
                        if not warm:
                            sent_per_search.append(len(sent) - before)
                            compared += len(expected)
    assert compared > 100
    return sent_per_search


async def test_a_search_of_few_holders_is_one_statement(database: PostgresDatabase) -> None:
    """Each search equals the in-memory store's and sends exactly one statement."""
    sent = await _compare(database, (1, 3, 10, 40))
    assert set(sent) == {1}, sent


async def test_common_terms_fall_back_to_the_top_k(
    database: PostgresDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Terms held by more than MOST_HOLDERS items: the pruned top-k answers, the same hits."""
    monkeypatch.setattr(lexical_search, "MOST_HOLDERS", 5)
    sent = await _compare(database, (1, 10))
    assert max(sent) > 1


@pytest.mark.parametrize("all_sent", [-1, 0, 10**9], ids=["scored", "scored-at-zero", "all"])
async def test_rows_scored_in_sql_or_all_sent_give_the_same_hits(
    database: PostgresDatabase, monkeypatch: pytest.MonkeyPatch, all_sent: int
) -> None:
    """Whether SQL scores the candidates and sends the best (terms held by more than ALL_SENT
    items) or sends them all unscored, each search equals the in-memory store's, one statement."""
    monkeypatch.setattr(lexical_search, "ALL_SENT", all_sent)
    sent = await _compare(database, (1, 3, 10, 40))
    assert set(sent) == {1}, sent


@pytest.mark.parametrize("all_sent", [-1, 10**9], ids=["scored", "all"])
async def test_long_queries_give_the_same_hits(
    database: PostgresDatabase, monkeypatch: pytest.MonkeyPatch, all_sent: int
) -> None:
    """Queries of up to MOST_TERMS words, words given twice among them: scored in SQL (one
    join of the candidates' terms with the query's) or all sent, the in-memory store's hits."""
    import random

    monkeypatch.setattr(lexical_search, "ALL_SENT", all_sent)
    rng = random.Random(13)
    words = [word for text in queries(60, seed=14) for word in text.split()]
    texts = [
        " ".join(rng.choices(words, k=rng.randint(6, lexical_search.MOST_TERMS))) for _ in range(8)
    ]
    sent = await _compare(database, (1, 10), texts)
    assert set(sent) == {1}, sent


@pytest.mark.parametrize("seed", range(5))
def test_each_rows_counts_are_its_count_of_each_key(seed: int) -> None:
    """answer gives each row sent its count of each query key (0 for those it does not hold),
    as a lookup of every key in the row's terms gives them, a key given twice included."""
    import random

    rng = random.Random(seed)
    words = [f"w{n}" for n in range(12)]
    keys = sorted(rng.sample(words, 6))
    if seed == 0:
        keys = [*keys, keys[0]]
    rows = []
    for n in range(20):
        terms = sorted(rng.sample(words, rng.randint(1, 8)))
        counts = [rng.randint(1, 4) for _ in terms]
        dfs = [3] * len(keys) if n == 0 else None  # the first row only
        sent = (" ".join(terms), " ".join(map(str, counts)))
        rows.append((40, 200, dfs, 60, f"k{n}", sum(counts), *sent, "item"))
    found = lexical_search.answer(rows, keys)
    assert found.matches is not None
    assert found.matches.frequencies == [3] * len(keys)
    held = [dict(zip(r[6].split(), map(int, r[7].split()), strict=True)) for r in rows]
    expected = [[h.get(k, 0) for k in keys] for h in held]
    assert [list(c.counts) for c in found.matches.candidates] == expected
    assert [c.key for c in found.matches.candidates] == [r[4] for r in rows]


async def test_a_plan_for_the_values_costs_what_the_generic_plan_costs(
    database: PostgresDatabase,
) -> None:
    """The planner's cost of the statement planned for its values (a custom plan) does not
    depend on how many terms the query has and is within what PostgreSQL charges for planning
    of the generic plan's, so a connection runs the generic plan after its first five
    executions instead of planning each again."""
    store = PostgresMemoryStore(database)
    await store.put_many(corpus(40, seed=11))
    kinds = "text, text, timestamptz, text[], text[], int, int, float8, int"

    async def costs(connection: Any) -> list[float]:
        await connection.execute(
            f"PREPARE lexical({kinds}) AS {lexical_search.statement('episodic')}"
        )
        found = []
        for mode, terms in (
            ("force_custom_plan", 1),
            ("force_custom_plan", 30),
            ("force_generic_plan", 1),
        ):
            await connection.execute(f"SET plan_cache_mode = {mode}")
            keys = ",".join(f"'w{n}'" for n in range(terms))
            plan = await connection.fetchval(
                "EXPLAIN (FORMAT JSON) EXECUTE lexical("
                f"'{ALICE.agent_id}', '{ALICE.user_id}', now(), NULL, ARRAY[{keys}], 10, 2000, 0.5, 600)"
            )
            found.append(json.loads(plan)[0]["Plan"]["Total Cost"])
        await connection.execute("RESET plan_cache_mode")
        await connection.execute("DEALLOCATE lexical")
        return found

    one, thirty, generic = await database.read(costs, store="test")
    assert one == thirty
    assert generic < one + 1000 * 0.0025  # PostgreSQL's least charge for planning, cheaper
