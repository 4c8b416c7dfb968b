"""Text analysis and BM25 scoring shared by the backends."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from prefrontal.retrieval.analysis import terms
from prefrontal.retrieval.lexical import Bm25Index, idf


def test_terms_are_lowercased_stemmed_without_stop_words() -> None:
    """Words are lower-cased, stop words dropped and the rest stemmed."""
    assert terms("The Dogs were RUNNING to the parks") == ["dog", "run", "park"]


def test_possessive_s_leaves_no_empty_term() -> None:
    """A lone "s" stems to nothing and is dropped, never indexed as an empty term."""
    assert terms("the provider's review") == ["provid", "review"]


@given(st.text(max_size=200))
def test_terms_are_never_empty_and_never_hold_spaces(text: str) -> None:
    """Every term is a non-empty run of letters and digits."""
    assert all(term and " " not in term and '"' not in term for term in terms(text))


def test_idf_matches_fts5_with_its_floor() -> None:
    """IDF is FTS5's log((N - n + 0.5) / (n + 0.5)), floored at 1e-6 for common terms."""
    assert idf(100, 10) == math.log(90.5 / 10.5)
    assert idf(3, 2) == 1e-6


def test_bm25_prefers_the_shorter_document_for_one_shared_term() -> None:
    """With equal term frequency, the shorter document scores higher."""
    index = Bm25Index()
    index.add("short", "red kite")
    index.add("long", "a red kite flew over the long green valley at dawn")
    index.add("other", "blue boat")
    scores = index.scores("kite")
    assert scores["short"] > scores["long"] > 0
    assert "other" not in scores


def test_scores_add_terms_in_sorted_order() -> None:
    """A document's score is the sum of its term scores taken in sorted term order."""
    index = Bm25Index()
    for n, text in enumerate(["kiwi cherry melon berry grape grape", "berry berry cherry", "fig"]):
        index.add(f"d{n}", text)
    scores = index.scores("grape cherry berry kiwi")
    by_term = {t: index.scores(t) for t in ("berri", "cherri", "grape", "kiwi")}
    expected = 0.0
    for term in sorted(by_term):
        expected += by_term[term].get("d0", 0.0)
    assert scores["d0"] == expected
