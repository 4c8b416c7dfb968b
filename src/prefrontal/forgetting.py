"""Every in-process cache that may hold a user's text, emptied when a user is erased.

:class:`~prefrontal.text_cache.TextCache` and
:class:`~prefrontal.object_cache.ObjectCache` register themselves here
(weakly: a cache no longer used is not kept alive). Their entries are keyed
by text or by object identity, not by user, so :func:`forget_everything`
empties them all: after an erase no cache holds the erased user's text,
and the other users' entries are worked out again as they are used.
"""

from __future__ import annotations

import weakref
from typing import Protocol


class Forgetting(Protocol):
    """A cache that can drop every entry it holds."""

    def clear(self) -> None: ...


_CACHES: weakref.WeakSet[Forgetting] = weakref.WeakSet()


def register(cache: Forgetting) -> None:
    """Empty ``cache`` with the others on :func:`forget_everything`."""
    _CACHES.add(cache)


def forget_everything() -> int:
    """Empty every registered cache; how many there were."""
    caches = list(_CACHES)
    for cache in caches:
        cache.clear()
    return len(caches)
