"""Caches of per-text results bounded by the bytes their entries take, not by entry count.

Rendered contexts run to tens of kilobytes each, and memory items to two
hundred; a cache of 65,536 of them could hold gigabytes. A
:class:`TextCache` holds at most ``max_bytes`` bytes of entries, drops the
least recently used texts first, and never keeps an entry heavier than a
sixteenth of its room.

An entry weighs what it keeps alive: the text (``sys.getsizeof``), its
result (``weigh(result)``, by default ``sys.getsizeof``; a result holding
objects of its own, such as a set of fresh strings, passes a ``weigh`` that
counts them) and :data:`ENTRY_BYTES` of bookkeeping. Short texts with
large results (the keywords of a one-line clock fragment, a new one each
minute) are charged what they cost, so the bound is one on memory.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from prefrontal.forgetting import register

DEFAULT_MAX_BYTES = 16_000_000
"""About 16 MB of entries."""

ENTRY_BYTES = 120
"""What an entry costs beyond its text and result: the ordered dictionary's slot and link."""

V = TypeVar("V")


def strings_weight(strings: Iterable[str]) -> int:
    """Bytes of a collection of strings and the strings in it (for results that own them)."""
    return sys.getsizeof(strings) + sum(sys.getsizeof(s) for s in strings)


class TextCache(Generic[V]):
    """``compute(text)``, remembered for recently seen texts within ``max_bytes`` bytes.

    Thread-safe: the store backends' worker threads may call it beside the event loop. A
    lookup of a text held takes no lock (two atomic steps of the ordered dictionary); adding
    an entry, dropping the oldest and emptying the cache take it.
    """

    def __init__(
        self,
        compute: Callable[[str], V],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        weigh: Callable[[Any], int] = sys.getsizeof,
    ) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must not be negative, got {max_bytes}")
        self._compute = compute
        self._weigh = weigh
        self._max_bytes = max_bytes
        self._largest = max_bytes // 16
        self._results: OrderedDict[str, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        register(self)

    def clear(self) -> None:
        """Drop every entry (an erased user's text among them)."""
        with self._lock:
            self._results.clear()
            self._bytes = 0

    @property
    def bytes(self) -> int:
        """Bytes the entries held now weigh (never more than ``max_bytes``)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._results)

    def __call__(self, text: str) -> V:
        # A text seen before (most calls) is looked up without the lock: each of the two calls
        # is one step of the ordered dictionary, which no other thread sees half done; only a
        # change of what is held and of its weight takes the lock.
        results = self._results
        held = results.get(text)
        if held is not None:
            try:  # noqa: SIM105 - contextlib.suppress would cost more than the lookup
                results.move_to_end(text)
            except KeyError:  # dropped by another thread in between: still its result
                pass
            return held[0]
        result = self._compute(text)
        weight = sys.getsizeof(text) + self._weigh(result) + ENTRY_BYTES
        if weight <= self._largest:
            self._remember(text, result, weight)
        return result

    def _remember(self, text: str, result: V, weight: int) -> None:
        with self._lock:
            if text in self._results:
                return
            self._results[text] = (result, weight)
            self._bytes += weight
            while self._bytes > self._max_bytes:
                _, (_, gone) = self._results.popitem(last=False)
                self._bytes -= gone


def text_cache(
    max_bytes: int, weigh: Callable[[Any], int] = sys.getsizeof
) -> Callable[[Callable[[str], V]], TextCache[V]]:
    """Decorate a function of one text with a :class:`TextCache` of ``max_bytes``."""

    def wrap(compute: Callable[[str], V]) -> TextCache[V]:
        return TextCache(compute, max_bytes=max_bytes, weigh=weigh)

    return wrap
