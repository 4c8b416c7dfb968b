"""SQLite's impact index: each item under its class of every term it holds, read by the top-k.

The classes are computed in SQL by triggers and in Python by the search:
both must put every length in the same bucket, and every row under the
tokens :func:`~prefrontal.retrieval.impacts.token` names, through inserts,
replacements and deletions. A search that reads holders by class (chunks
made small so that every query needs several) ranks as the in-memory store
does, and a file at schema 7 gains the index when it is opened.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prefrontal.retrieval.impacts import (
    LAST_BUCKET,
    bucket_shortest,
    code,
    length_bucket,
    reaching,
    sql_bucket,
    sql_code,
    token,
)
from prefrontal.retrieval.ranking import BoundedTerm, Corpus, term_score
from prefrontal.stores.long_term import MemoryItem, MemoryQuery
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.memory_search import stored_terms
from prefrontal.stores.sqlite import open_stores
from prefrontal.stores.sqlite import topk as ranking
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.sqlite.lexical_arrays import LexicalArrays
from prefrontal.stores.sqlite.migrations import LATEST, schema_version
from prefrontal.stores.tenancy import Tenant
from tests.stores.ranked_alike import assert_ranked_alike, random_queries
from tests.stores.sqlite_schema import to_schema_7

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 2, 1, tzinfo=UTC)
STORED = datetime(2026, 1, 31, tzinfo=UTC)
"""When every item was stored: a day before the searches, whatever day the suite runs."""
ALICE = Tenant(agent_id="agent-1", user_id="alice")
COMMON = ["apple", "pear", "plum", "fig"]
RARE = ["quince", "yuzu", "sloe", "medlar", "damson"]
FILLER = ["words", "here", "more", "text", "again"]


def lengths() -> Iterator[int]:
    """Every length up to 5,000, then a spread of larger ones to past the last bucket."""
    yield from range(5_001)
    yield from (2**n + d for n in range(13, 31) for d in (-1, 0, 1, 12_345))


def test_every_length_is_in_one_bucket_whose_shortest_length_starts_it() -> None:
    """Buckets are contiguous, ordered and start where :func:`bucket_shortest` says."""
    for length in lengths():
        bucket = length_bucket(length)
        assert 0 <= bucket <= LAST_BUCKET
        assert bucket_shortest(bucket) <= length
        if bucket < LAST_BUCKET:
            assert length < bucket_shortest(bucket + 1)
    assert [length_bucket(bucket_shortest(b)) for b in range(LAST_BUCKET + 1)] == list(
        range(LAST_BUCKET + 1)
    )


def test_sql_puts_every_length_in_the_bucket_and_class_python_does() -> None:
    connection = sqlite3.connect(":memory:")
    query = f"SELECT {sql_bucket(':length')}, {sql_code(':tf', ':length')}"
    for length in lengths():
        for tf in (1, 2, 3, 7):
            bucket, klass = connection.execute(query, {"length": length, "tf": tf}).fetchone()
            assert (bucket, klass) == (length_bucket(length), code(tf, length))


def test_no_holder_outside_the_classes_reached_adds_more_than_the_rest() -> None:
    """A holder that can reach the score is in a class reached; any other adds at most ``rest``."""
    corpus = Corpus(docs=1_000, tokens=20_000)
    term = BoundedTerm.of("apple", corpus, 300, ((1, 3), (2, 9), (5, 30)))
    holders = [(1, n) for n in range(3, 600)] + [(2, n) for n in range(9, 600)]
    holders += [(tf, n) for tf in (3, 4, 5) for n in range(30, 600)]
    reached_some = left_some = 0
    for theta in (0.0, 0.3, 0.6, 1.0, 1.5, 2.0, 2.5, term.bound, term.bound * 2):
        reach = reaching(term, theta, 1.0)
        assert reach is not None
        assert reach.rest < theta or reach.rest == 0.0
        for tf, length in holders:
            gain = term.weight * term_score(1.0, tf, length, corpus.average)
            if code(tf, length) in reach.codes:
                reached_some += 1
            else:
                left_some += 1
                assert gain <= reach.rest < theta, (theta, tf, length)
    assert reached_some and left_some
    assert reaching(BoundedTerm("x", 1.0, 1.0), 1.0, 1.0) is None


def corpus(count: int, seed: int) -> list[MemoryItem]:
    """Items holding common words up to four times and rare ones, from 1 to 200 terms long."""
    rng = random.Random(seed)
    items = []
    for n in range(count):
        words = [
            *rng.choices(COMMON, k=rng.randint(0, 4)),
            *rng.choices(RARE, k=rng.choice([0, 0, 1, 2])),
            *rng.choices(FILLER, k=rng.choice([0, 1, 3, 8, 20, 60, 200])),
        ]
        rng.shuffle(words)
        items.append(
            MemoryItem(
                item_id=f"i{n:04d}",
                agent_id="agent-1",
                user_id="alice",
                content=" ".join(words) or "empty",
                created_at=STORED,
            )
        )
    return items


def tokens_held(connection: sqlite3.Connection, rowid: int, terms: list[str]) -> None:
    """The row is found under the token of each of its distinct terms, and under no other class."""
    counts = Counter(terms)
    for term, tf in counts.items():
        found = connection.execute(
            "SELECT rowid FROM episodic_impacts WHERE episodic_impacts MATCH ?",
            (f'"{token(term, tf, len(terms))}"',),
        ).fetchall()
        assert (rowid,) in found, (term, tf, len(terms))
        other = token(term, tf + 1, len(terms))
        stray = connection.execute(
            "SELECT rowid FROM episodic_impacts WHERE episodic_impacts MATCH ? AND rowid = ?",
            (f'"{other}"', rowid),
        ).fetchall()
        assert tf >= 3 or stray == []


async def test_triggers_keep_every_row_under_its_tokens(tmp_path: Path) -> None:
    """Inserted, replaced and deleted items: the index holds exactly the live rows' tokens."""
    path = tmp_path / "impacts.db"
    stores = open_stores(path)
    items = corpus(60, seed=5)
    await stores.episodic.put_many(items)
    replaced = [
        item.model_copy(update={"content": "apple apple apple pear"}) for item in items[:10]
    ]
    await stores.episodic.put_many(replaced)
    await stores.episodic.delete(ALICE, [item.item_id for item in items[10:20]])
    await stores.aclose()
    connection = sqlite3.connect(path)
    rows = connection.execute("SELECT rowid, terms FROM episodic_items").fetchall()
    assert len(rows) == 50
    for rowid, terms in rows:
        tokens_held(connection, rowid, terms.split())
    indexed = {
        row[0]
        for row in connection.execute(
            "SELECT rowid FROM episodic_impacts WHERE episodic_impacts MATCH ?",
            (" OR ".join(f'"{token("apple", tf, n)}"' for tf in (1, 2, 3) for n in range(400)),),
        )
    }
    holding = {rowid for rowid, terms in rows if "apple" in terms.split()}
    assert indexed == holding
    connection.close()


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Chunks of 8 postings, and the terms whose holders were read by impact class (every
    search walking FTS5's postings, the arrays never current)."""
    monkeypatch.setattr(ranking, "_CHUNK", 8)
    monkeypatch.setattr(LexicalArrays, "usable", lambda self, connection: False)
    read: list[str] = []
    original = ranking._TopK.visit_impacts

    def spy(self: ranking._TopK, term: BoundedTerm) -> BoundedTerm:
        read.append(term.text)
        return original(self, term)

    monkeypatch.setattr(ranking._TopK, "visit_impacts", spy)
    return read


async def test_reads_by_impact_class_rank_as_the_in_memory_store(
    tmp_path: Path, small_chunks: list[str]
) -> None:
    """Hits and scores equal scoring every match, over replacements and deletions."""
    rng = random.Random(7)
    items = corpus(700, seed=1)
    memory, stores = InMemoryMemoryStore(), open_stores(tmp_path / "ranked.db")
    for store in (memory, stores.episodic):
        await store.put_many(items)
        await store.put_many(
            [item.model_copy(update={"content": "apple apple fig"}) for item in items[:30]]
        )
        await store.delete(ALICE, [item.item_id for item in items[30:60]])
    queries = random_queries(rng, COMMON + RARE, (1, 3, 10, 40), 150, NOW)
    await assert_ranked_alike(memory, stores.episodic, ALICE, queries)
    await stores.aclose()
    assert len(small_chunks) > 50
    assert set(small_chunks) >= {term for word in COMMON for term in stored_terms(word) or []}


async def test_a_file_at_schema_7_gains_the_index_and_ranks_alike(
    tmp_path: Path, small_chunks: list[str]
) -> None:
    path = tmp_path / "old.db"
    items = corpus(300, seed=2)
    stores = open_stores(path)
    await stores.episodic.put_many(items)
    query = MemoryQuery(text="apple", limit=3, now=NOW)
    before = await stores.episodic.search(ALICE, query)
    await stores.aclose()
    connection = sqlite3.connect(path, isolation_level=None)
    to_schema_7(connection)
    connection.execute("PRAGMA user_version = 7")
    connection.close()

    reopened = open_stores(path)
    small_chunks.clear()
    after = await reopened.episodic.search(ALICE, query)
    await reopened.aclose()
    assert [(h.item.item_id, h.score) for h in after] == [(h.item.item_id, h.score) for h in before]
    assert small_chunks
    connection = sqlite3.connect(path)
    assert schema_version(connection) == LATEST
    for rowid, terms in connection.execute("SELECT rowid, terms FROM episodic_items LIMIT 40"):
        tokens_held(connection, rowid, terms.split())
    connection.close()
