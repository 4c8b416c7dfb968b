"""Text analysis shared by the backends."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from prefrontal.retrieval.lexical import terms


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
