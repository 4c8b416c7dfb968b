"""BM25 in the core: the formula, scores of candidates from postings, and bounds."""

from __future__ import annotations

import math

import pytest

from prefrontal.retrieval.analysis import terms
from prefrontal.retrieval.postings import Postings
from prefrontal.retrieval.ranking import (
    BoundedTerm,
    Candidate,
    Corpus,
    LexicalMatches,
    idf,
    query_terms,
    scores,
    term_score,
)


def bm25(index: Postings, text: str) -> dict[str, float]:
    return scores(index.matches(query_terms(text)))


def test_query_terms_are_the_distinct_terms_sorted_and_each_call_has_its_own_list() -> None:
    """Asked again for a text already analysed, the terms are the same, in a list of their own."""
    text = "Kites fly; the kite flies over kites"
    first = query_terms(text)
    assert first == sorted(set(terms(text)))
    first.append("zzz")
    assert query_terms(text) == sorted(set(terms(text)))
    assert query_terms(text) is not query_terms(text)


def test_idf_matches_fts5_with_its_floor() -> None:
    """IDF is FTS5's log((N - n + 0.5) / (n + 0.5)), floored at 1e-6 for common terms."""
    assert idf(100, 10) == math.log(90.5 / 10.5)
    assert idf(3, 2) == 1e-6


def test_bm25_prefers_the_shorter_document_for_one_shared_term() -> None:
    """With equal term frequency, the shorter document scores higher."""
    index = Postings()
    index.add("short", "red kite")
    index.add("long", "a red kite flew over the long green valley at dawn")
    index.add("other", "blue boat")
    scores = bm25(index, "kite")
    assert scores["short"] > scores["long"] > 0
    assert "other" not in scores


def test_scores_add_terms_in_sorted_order() -> None:
    """A document's score is the sum of its term scores taken in sorted term order."""
    index = Postings()
    for n, text in enumerate(["kiwi cherry melon berry grape grape", "berry berry cherry", "fig"]):
        index.add(f"d{n}", text)
    scores = bm25(index, "grape cherry berry kiwi")
    by_term = {t: bm25(index, t) for t in ("berri", "cherri", "grape", "kiwi")}
    expected = 0.0
    for term in sorted(by_term):
        expected += by_term[term].get("d0", 0.0)
    assert scores["d0"] == expected


def test_postings_leave_out_documents_not_allowed_but_count_them() -> None:
    """Documents outside ``allowed`` are no candidates, yet count in the statistics."""
    index = Postings()
    for n, text in enumerate(["red kite", "red boat", "green field"]):
        index.add(f"d{n}", text)
    found = index.matches(["red"], allowed={"d0"})
    assert [c.key for c in found.candidates] == ["d0"]
    assert found.corpus == Corpus(docs=3, tokens=6)
    assert list(found.frequencies) == [2]


class CountingAllowed:
    """The documents a search may return, counting how often each is asked about."""

    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed
        self.asked: dict[object, int] = {}

    def __contains__(self, doc_id: object) -> bool:
        self.asked[doc_id] = self.asked.get(doc_id, 0) + 1
        return doc_id in self.allowed


def test_each_document_is_asked_about_once_whatever_terms_it_holds() -> None:
    """A document holding several query terms is asked once, allowed or not, with the same counts."""
    index = Postings()
    for n, text in enumerate(["red kite sail", "red kite", "red boat sail", "green field"]):
        index.add(f"d{n}", text)
    allowed = CountingAllowed({"d0", "d2"})
    found = index.matches(query_terms("red kite sail"), allowed=allowed)
    assert allowed.asked == {"d0": 1, "d1": 1, "d2": 1}
    assert {c.key: list(c.counts) for c in found.candidates} == {
        "d0": [1, 1, 1],
        "d2": [0, 1, 1],
    }
    assert found.candidates == index.matches(query_terms("red kite sail"), {"d0", "d2"}).candidates


def test_removed_documents_leave_the_statistics_as_if_never_added() -> None:
    """Adding then removing a document gives the scores of never adding it."""
    index, other = Postings(), Postings()
    for target in (index, other):
        target.add("a", "kite kite wind")
        target.add("b", "kite sail")
    index.add("c", "kite harbour harbour")
    index.remove("c")
    assert bm25(index, "kite") == bm25(other, "kite")


def test_scores_count_each_candidates_terms_with_the_formula() -> None:
    """A candidate's score is the sum of ``term_score`` of the terms it holds, in query order."""
    corpus = Corpus(docs=10, tokens=80)
    found = LexicalMatches(
        corpus=corpus, frequencies=[2, 5], candidates=[Candidate("x", 6, [1, 3])]
    )
    expected = 0.0 + term_score(idf(10, 2), 1, 6, 8.0) + term_score(idf(10, 5), 3, 6, 8.0)
    assert scores(found) == {"x": expected}
    assert scores(LexicalMatches(Corpus(0, 0), [0], [Candidate("x", 1, [1])])) == {}


def test_bound_at_a_length_is_no_less_than_any_score_at_that_length() -> None:
    """No document of a given length holding a term scores more on it than ``bound_at``."""
    buckets = ((1, 4), (2, 7), (5, 11))
    corpus = Corpus(docs=1_000, tokens=9_500)
    bounded = BoundedTerm.of("ant", corpus, 40, buckets)
    weight, average = idf(1_000, 40), corpus.average
    for length in range(4, 60):
        cases = [(1, length)] + [(2, length)] * (length >= 7) + [(5, length)] * (length >= 11)
        for tf, at in cases:
            assert term_score(weight, tf, at, average) <= bounded.bound_at(length) * (1 + 1e-9)
    assert bounded.bound_at(4) == pytest.approx(bounded.bound)
    assert bounded.bound_at(40) < bounded.bound
    assert math.isclose(bounded.weight, weight)
