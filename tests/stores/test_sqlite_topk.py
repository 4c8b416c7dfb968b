"""The pieces of the SQLite top-k search: query expressions, sets, length limits, scores."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from prefrontal.retrieval.postings import Postings
from prefrontal.retrieval.ranking import BoundedTerm, Corpus, Scorer, idf, query_terms, scores
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.memory import InMemoryMemoryStore
from prefrontal.stores.sqlite import open_stores
from prefrontal.stores.sqlite import topk as ranking
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.stores.tenancy import Tenant
from tests.stores.ranked_alike import assert_ranked_alike, random_queries

NOW = datetime(2026, 2, 1, tzinfo=UTC)
WORDS = ("ant", "bee", "cat", "dog", "eel", "fox")


def term(text: str, bound: float, buckets: tuple[tuple[int, int], ...] = ()) -> BoundedTerm:
    return BoundedTerm(text=text, weight=1.0, bound=bound, buckets=buckets, average=10.0)


def flat(sets: list[list[BoundedTerm]]) -> str:
    """The unfactored disjunction of conjunctions, for comparison."""
    return " OR ".join("(" + " AND ".join(ranking.quoted(t.text) for t in s) + ")" for s in sets)


def test_factored_expression_matches_what_the_flat_one_matches() -> None:
    """Sharing first terms in the FTS5 query changes no match, for many random families of sets."""
    rng = random.Random(3)
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE VIRTUAL TABLE docs USING fts5(terms)")
    for _ in range(300):
        words = rng.sample(WORDS, rng.randint(1, len(WORDS)))
        connection.execute("INSERT INTO docs (terms) VALUES (?)", (" ".join(words),))
    terms = [term(word, 1.0) for word in WORDS]
    query = "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rowid"
    for _ in range(200):
        sets = [sorted(rng.sample(terms, rng.randint(1, 4)), key=terms.index) for _ in range(5)]
        factored = ranking.expression(sets)
        assert factored.count('"') <= flat(sets).count('"')
        expected = connection.execute(query, (flat(sets),)).fetchall()
        assert connection.execute(query, (factored,)).fetchall() == expected, factored


def test_factored_expression_names_a_shared_first_term_once() -> None:
    """Sets starting with the same term name it once: ``a AND (b OR c)``."""
    a, b, c = term("a", 1.0), term("b", 1.0), term("c", 1.0)
    assert ranking.expression([[a, b], [a, c]]) == '"a" AND (("b") OR ("c"))'


def brute_force(
    base: BoundedTerm, later: list[BoundedTerm], theta: float, excluded: list[frozenset[str]]
) -> list[set[str]]:
    """Every set of ``later`` lifting ``base`` to ``theta`` that completes no excluded set."""
    found = []
    for n in range(1, len(later) + 1):
        for chosen in itertools.combinations(later, n):
            texts = {t.text for t in chosen}
            if any(out <= texts for out in excluded):
                continue
            if (base.bound + sum(t.bound for t in chosen)) * ranking._MARGIN >= theta:
                found.append(texts)
    return found


def test_smallest_sets_cover_every_set_that_reaches_theta_except_excluded_ones() -> None:
    """Each set able to reach the k-th score, excluded ones aside, holds a set the query asks for."""
    rng = random.Random(8)
    checked = 0
    for _ in range(300):
        base = term("base", rng.uniform(0.5, 6.0))
        later = [term(w, rng.uniform(0.1, 6.0)) for w in WORDS[: rng.randint(1, 5)]]
        theta = rng.uniform(1.0, 20.0)
        excluded = [frozenset(rng.sample([t.text for t in later], 2))] if len(later) > 2 else []
        sets = ranking._smallest_sets(base, later, theta, excluded)
        if sets is None:
            continue
        asked = [{t.text for t in s} for s in sets]
        assert not any(out <= s for s in asked for out in excluded)
        for needed in brute_force(base, later, theta, excluded):
            assert any(s <= needed for s in asked), (needed, asked)
            checked += 1
    assert checked > 100


def test_a_document_longer_than_the_limit_cannot_reach_theta() -> None:
    """The length limit is the longest at which the bounds still reach the k-th score."""
    first = term("ant", 3.0, ((1, 4), (2, 9)))
    later = [term("bee", 2.0, ((1, 3),)), term("cat", 1.0, ((1, 5), (3, 12)))]
    best = [1.2] * 10
    limit = ranking._length_limit(first, later, best, 10)
    assert limit is not None

    def reach(held: list[BoundedTerm], length: int) -> float:
        return sum(t.bound_at(length) for t in held) * ranking._MARGIN

    def longest(held: list[BoundedTerm]) -> int:
        """The longest length at which ``held`` reaches the k-th score (0: none)."""
        return max((n for n in range(1, 1_000) if reach(held, n) >= best[0]), default=0)

    once = term("ant", 3.0, ((1, 4),))
    assert limit.longest == longest([first, *later])
    assert limit.once == longest([once, *later]) < limit.longest
    assert limit.alone == longest([first]) > limit.alone_once == longest([once]) > 0
    assert limit.needle == " ant "
    assert limit.later == '[" bee ", " cat "]'
    asked_with_later = ranking._length_limit(first, later, best, 10, alone=False)
    assert asked_with_later is not None
    assert asked_with_later.later is None
    assert ranking._length_limit(first, later, best[:9], 10) is None


def test_a_term_held_only_more_than_once_limits_single_holders_to_nothing() -> None:
    """With no document holding the term once, every unseen holder must hold it twice."""
    first = term("ant", 3.0, ((2, 9),))
    limit = ranking._length_limit(first, [], [0.5] * 3, 3)
    assert limit is not None
    assert limit.once == limit.alone_once == 0 < limit.longest


def test_sqlite_finds_a_second_occurrence_only_where_there_is_one() -> None:
    """The postings filter's check for a term held twice agrees with counting it."""
    connection = sqlite3.connect(":memory:")
    check = """SELECT instr(substr(' ' || :terms || ' ',
        instr(' ' || :terms || ' ', :needle) + 1), :needle) > 0"""
    rng = random.Random(4)
    for _ in range(300):
        words = rng.choices([*WORDS, "ants", "bant"], k=rng.randint(1, 8))
        word = rng.choice(WORDS)
        (twice,) = connection.execute(
            check, {"terms": " ".join(words), "needle": f" {word} "}
        ).fetchone()
        assert bool(twice) == (words.count(word) >= 2), (words, word)


def test_scorer_reads_padded_terms_text_as_the_postings_count_it() -> None:
    """A term twice in a row counts twice, and the padded text scores to the postings' bits."""
    index = Postings()
    texts = {"d1": "fox fox eel", "d2": "eel ant fox", "d3": "bee bee bee fox"}
    for key, text in texts.items():
        index.add(key, text)
    expected = scores(index.matches(query_terms("fox eel bee")))
    corpus = Corpus(docs=3, tokens=sum(len(t.split()) for t in texts.values()))
    stats = {"bee": 1, "eel": 2, "fox": 3}
    scorer = Scorer([idf(3, n) for n in stats.values()], corpus, list(stats))
    assert scorer.padded(" fox fox eel ", 3) == scorer([0, 1, 2], 3)
    for key, text in texts.items():
        assert scorer.padded(f" {text} ", len(text.split())) == expected[key]


@pytest.mark.anyio
async def test_large_k_over_skewed_words_ranks_as_the_in_memory_store(tmp_path: Path) -> None:
    """Top 1 to 150 over common words, repeated in long and short items: the in-memory ranking,
    over the arrays and walking FTS5's postings."""
    rng = random.Random(11)
    common = ["apple", "pear", "plum", "fig", "kiwi", "lime"]
    rare = ["quince", "yuzu", "sloe", "medlar"]
    items = [
        MemoryItem(
            item_id=f"k{i:04d}",
            agent_id="agent-1",
            user_id="alice",
            content=" ".join(
                rng.choices(common, k=rng.randint(1, 4))
                + rng.choices(rare, k=rng.randint(0, 1))
                + rng.choices(["filler", "words", "here"], k=rng.choice([0, 2, 12, 40]))
            ),
            created_at=NOW - timedelta(days=1),
        )
        for i in range(900)
    ]
    memory, stores = InMemoryMemoryStore(), open_stores(tmp_path / "skewed.db")
    await memory.put_many(items)
    await stores.episodic.put_many(items)
    tenant = Tenant(agent_id="agent-1", user_id="alice")
    queries = random_queries(rng, common + rare, (1, 10, 60, 150), 120, NOW)
    await assert_ranked_alike(memory, stores.episodic, tenant, queries)
    stores.episodic.lexical = None  # type: ignore[attr-defined]
    await assert_ranked_alike(memory, stores.episodic, tenant, queries)
    await stores.aclose()
