"""The pieces of the SQLite top-k search: query expressions, sets, length limits, scores."""

from __future__ import annotations

import itertools
import random
import sqlite3

import pytest

from prefrontal.retrieval.lexical import Bm25Index, Corpus, idf, term_score
from prefrontal.stores.sqlite import ranking
from prefrontal.stores.sqlite.ranking import Scorer, Term

WORDS = ("ant", "bee", "cat", "dog", "eel", "fox")


def term(text: str, bound: float, buckets: tuple[tuple[int, int], ...] = ()) -> Term:
    return Term(text=text, weight=1.0, bound=bound, buckets=buckets, average=10.0)


def flat(sets: list[list[Term]]) -> str:
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
    base: Term, later: list[Term], theta: float, excluded: list[frozenset[str]]
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
    best = [2.5] * 10
    longest = ranking._longest(first, later, best, 10)
    assert longest is not None

    def reach(length: int) -> float:
        return sum(t.bound_at(length) for t in [first, *later]) * ranking._MARGIN

    assert reach(longest) >= best[0] > reach(longest + 1)
    assert ranking._longest(first, later, best[:9], 10) is None


def test_bound_at_a_length_is_no_less_than_any_score_at_that_length() -> None:
    """No document of a given length holding a term scores more on it than ``bound_at``."""
    buckets = ((1, 4), (2, 7), (5, 11))
    weight, average = idf(1_000, 40), 9.5
    gain = max(term_score(1.0, tf, length, average) for tf, length in buckets)
    bounded = Term("ant", weight, weight * gain, buckets, average)
    for length in range(4, 60):
        cases = [(1, length)] + [(2, length)] * (length >= 7) + [(5, length)] * (length >= 11)
        for tf, at in cases:
            assert term_score(weight, tf, at, average) <= bounded.bound_at(length) * ranking._MARGIN
    assert bounded.bound_at(4) == pytest.approx(bounded.bound)
    assert bounded.bound_at(40) < bounded.bound


def test_scorer_counts_repeated_terms_as_the_in_memory_index_does() -> None:
    """A term twice in a row counts twice, and the score has the in-memory index's bits."""
    index = Bm25Index()
    texts = {"d1": "fox fox eel", "d2": "eel ant fox", "d3": "bee bee bee fox"}
    for key, text in texts.items():
        index.add(key, text)
    expected = index.scores("fox eel bee")
    corpus = Corpus(docs=3, tokens=sum(len(t.split()) for t in texts.values()))
    stats = {"fox": 3, "eel": 2, "bee": 1}
    terms = [Term(w, idf(3, n), 1.0) for w, n in stats.items()]
    scorer = Scorer(terms, corpus)
    for key, text in texts.items():
        assert scorer(f" {text} ", len(text.split())) == expected[key]
