"""Pseudo-relevance feedback: which words of the best hits become a further query."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from prefrontal.retrieval.analysis import terms, written_terms
from prefrontal.retrieval.feedback import document_frequency, expansion_terms

BACKGROUND = [
    "I love hiking with the kids",
    "The kids love the beach",
    "She studies counseling and psychology",
    "Counseling helped me a lot",
]


def test_written_terms_drops_stop_words_and_keeps_spelling() -> None:
    """Stop words go; each word keeps its lower-case spelling beside its stem."""
    assert written_terms("The Running dogs") == [("run", "running"), ("dog", "dogs")]


def test_document_frequency_counts_each_text_once() -> None:
    """A term said twice in one text counts one text."""
    assert document_frequency(["kids kids", "kids beach"]) == {"kid": 2, "beach": 1}


def test_expansion_leaves_out_the_query_words() -> None:
    """A word the query already has is never an expansion word."""
    words = expansion_terms([(BACKGROUND[2], 1.0)], BACKGROUND, "what does she study", 5)
    assert "studies" not in words
    assert words[:2] == ["psychology", "counseling"]


def test_expansion_prefers_rare_words_of_high_scoring_hits() -> None:
    """A word many candidates have counts less than one few have (ties go alphabetically)."""
    words = expansion_terms([(BACKGROUND[0], 1.0)], BACKGROUND, "what do they do outside", 2)
    assert words == ["hiking", "kids"]


def test_expansion_favours_words_the_feedback_hits_share() -> None:
    """A word in two good hits outweighs a rarer word in only the weaker one."""
    feedback = [(BACKGROUND[0], 1.0), (BACKGROUND[1], 0.5)]
    words = expansion_terms(feedback, BACKGROUND, "what do they do outside", 4)
    assert words == ["kids", "love", "hiking", "beach"]


def test_expansion_ignores_hits_without_score_and_bare_numbers() -> None:
    """Hits scoring 0 lend nothing, and numbers are not expansion words."""
    feedback = [("seen in 2023 with friends", 1.0), ("unrelated words", 0.0)]
    assert expansion_terms(feedback, [t for t, _ in feedback], "when", 5) == ["friends", "seen"]


@given(
    st.lists(st.tuples(st.text(max_size=40), st.floats(0, 10)), max_size=5),
    st.text(max_size=20),
    st.integers(0, 8),
)
def test_expansion_is_bounded_and_new(
    feedback: list[tuple[str, float]], query: str, count: int
) -> None:
    """At most ``count`` words, none of them a word of the query."""
    words = expansion_terms(feedback, [t for t, _ in feedback], query, count)
    assert len(words) <= count
    assert not set(terms(" ".join(words))) & set(terms(query))
