"""Caches of per-text results bounded by the characters of text they hold, not by entry count.

Rendered contexts run to tens of kilobytes each, and memory items to two
hundred; a cache of 65,536 of them could hold gigabytes. A
:class:`TextCache` holds at most ``max_chars`` characters of keys (the
results are small: counts, term sets), drops the least recently used texts
first, and never keeps a text longer than a sixteenth of its room.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

DEFAULT_MAX_CHARS = 16_000_000
"""About 16 MB of text (64 MB at worst for text outside the Basic Multilingual Plane)."""

V = TypeVar("V")


class TextCache(Generic[V]):
    """``compute(text)``, remembered for recently seen texts within ``max_chars`` characters.

    Thread-safe: the store backends' worker threads may call it beside the event loop.
    """

    def __init__(self, compute: Callable[[str], V], *, max_chars: int = DEFAULT_MAX_CHARS) -> None:
        if max_chars < 0:
            raise ValueError(f"max_chars must not be negative, got {max_chars}")
        self._compute = compute
        self._max_chars = max_chars
        self._largest = max_chars // 16
        self._results: OrderedDict[str, V] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    @property
    def chars(self) -> int:
        """Characters of text the cache holds now (never more than ``max_chars``)."""
        return self._chars

    def __len__(self) -> int:
        return len(self._results)

    def __call__(self, text: str) -> V:
        with self._lock:
            if text in self._results:
                self._results.move_to_end(text)
                return self._results[text]
        result = self._compute(text)
        if len(text) <= self._largest:
            self._remember(text, result)
        return result

    def _remember(self, text: str, result: V) -> None:
        with self._lock:
            if text in self._results:
                return
            self._results[text] = result
            self._chars += len(text)
            while self._chars > self._max_chars:
                oldest, _ = self._results.popitem(last=False)
                self._chars -= len(oldest)


def text_cache(max_chars: int) -> Callable[[Callable[[str], V]], TextCache[V]]:
    """Decorate a function of one text with a :class:`TextCache` of ``max_chars``."""

    def wrap(compute: Callable[[str], V]) -> TextCache[V]:
        return TextCache(compute, max_chars=max_chars)

    return wrap
