"""One value per running event loop: loop-bound primitives for an object any loop may use.

An anyio ``CapacityLimiter`` belongs to the event loop it first waited in;
a :class:`~prefrontal.stores.sqlite.database.Database` shared by threads
that each run their own loop (``asyncio.run`` in each) needs one per loop.
:class:`PerLoop` makes the value on a loop's first call and keeps it while
the loop lives (weakly: a closed loop's values go with it). What must
exclude across loops is a threading primitive, not one of these.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

import anyio.lowlevel

V = TypeVar("V")


def running_loop() -> object:
    """The event loop running in this thread (asyncio's loop, or another backend's token)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return anyio.lowlevel.current_token().native_token


class PerLoop(Generic[V]):
    """``make()`` once per running event loop; :meth:`get` returns this loop's value."""

    def __init__(self, make: Callable[[], V]) -> None:
        self._make = make
        self._values: weakref.WeakKeyDictionary[object, V] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._last: tuple[weakref.ref[object], V] | None = None

    def get(self) -> V:
        """The value of the loop running in this thread, made on its first call."""
        loop = running_loop()
        last = self._last
        if last is not None and last[0]() is loop:
            return last[1]
        with self._lock:
            value = self._values.get(loop)
            if value is None:
                value = self._values[loop] = self._make()
            self._last = (weakref.ref(loop), value)
        return value
