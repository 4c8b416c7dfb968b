"""A small least-recently-used map that threads may share: the decoding caches' one store.

The caches that keep a document with what it decodes to (a buffer's
snapshots, turn traces, stored records) each hold the last few entries
used; :class:`Recent` is that map, with a lock for every call (event loops
in several threads of one process share these caches). It has ``clear``,
so a cache made of it goes in the forgetting registry
(:func:`prefrontal.forgetting.register`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """The last ``size`` entries put, least recently used dropped first.

    Safe to share between threads (event loops in several threads of one
    process share these caches): each call holds a lock.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def peek(self, key: K) -> V | None:
        """The value kept for ``key``, its place in the order of use left as it is."""
        with self._lock:
            return self._entries.get(key)

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def drop(self, key: K) -> None:
        """Forget ``key`` (nothing happens when it is not kept)."""
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        """Drop every entry (an erased user's items among them)."""
        with self._lock:
            self._entries.clear()

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
            return value
