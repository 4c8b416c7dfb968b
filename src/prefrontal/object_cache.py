"""Values worked out from immutable objects, remembered while those very objects are in use.

A stored record (a frozen model an in-memory store hands out turn after
turn) gives the same text, terms and fragments each time it is read. An
:class:`ObjectCache` remembers such a value by the identities of the
objects it was worked out from and a hashable key of whatever else it
depends on (a rank, a place, a setting), so that a turn reading the same
objects again looks the value up instead of working it out.

An entry holds its objects, so their identities cannot be reused by other
objects while it lives: an entry found by identities is one of the very
objects asked about, never of others that happen to share an address. At
most ``size`` entries are kept, the least recently used dropped first.
Only immutable objects may be named: a value is never worked out again for
an object that changed in place.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from prefrontal.forgetting import register

V = TypeVar("V")


class ObjectCache(Generic[V]):
    """``compute()`` for ``objects`` and ``key``, remembered for the ``size`` most recent.

    Thread-safe: entries are added and dropped under a lock; a lookup takes
    none (a value found is right for its objects even if another thread
    drops its entry meanwhile). Keys should hash without Python code (strings,
    numbers, ``None`` and tuples of them), so that a lookup is one step.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[tuple[object, ...], V]] = OrderedDict()
        self._lock = threading.Lock()
        register(self)

    def clear(self) -> None:
        """Drop every entry (an erased user's objects among them)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __call__(self, objects: tuple[object, ...], key: Hashable, compute: Callable[[], V]) -> V:
        """The value remembered for these very ``objects`` and ``key``, else ``compute()``'s."""
        slot = (key, *map(id, objects))
        held = self._entries.get(slot)
        if held is not None:
            try:  # noqa: SIM105 - contextlib.suppress would cost more than the lookup
                self._entries.move_to_end(slot)
            except KeyError:  # dropped by another thread since it was found: still right
                pass
            return held[1]
        value = compute()
        with self._lock:
            self._entries[slot] = (objects, value)
            self._entries.move_to_end(slot)
            if len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return value
