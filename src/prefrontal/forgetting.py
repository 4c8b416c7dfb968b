"""Every in-process cache, in one registry, emptied when a user is erased or a memory forgotten.

:class:`~prefrontal.text_cache.TextCache` and
:class:`~prefrontal.object_cache.ObjectCache` register themselves here
(weakly: a cache no longer used is not kept alive), and every function
whose results are remembered is decorated with :func:`remembered`
(``functools.lru_cache``, registered), never with ``functools`` directly: a
test fails on any other cache in ``src``. Entries are keyed by text, by
value or by object identity, not by user, so :func:`forget_everything`
empties them all: after an erase or a forget no cache holds the text that
went, and the other users' entries are worked out again as they are used.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import _lru_cache_wrapper, lru_cache
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Forgetting(Protocol):
    """A cache that can drop every entry it holds."""

    def clear(self) -> None: ...


_CACHES: weakref.WeakSet[Forgetting] = weakref.WeakSet()
_FUNCTIONS: list[_lru_cache_wrapper[Any]] = []
"""The functions :func:`remembered` made (module-level: they live as long as the process)."""
_KEPT: set[int] = set()
"""Ids of those made with ``holds_text=False``: listed, never emptied."""


def register(cache: Forgetting) -> None:
    """Empty ``cache`` with the others on :func:`forget_everything`."""
    _CACHES.add(cache)


def remembered(
    maxsize: int | None, *, holds_text: bool = True
) -> Callable[[Callable[..., T]], _lru_cache_wrapper[T]]:
    """``functools.lru_cache(maxsize=maxsize)``, emptied on :func:`forget_everything`.

    The one way ``src`` remembers a function's results: whatever it holds
    (a user's text, or something worked out from it) goes on erase and
    forget. ``holds_text=False`` declares a function whose arguments and
    results hold no text of anyone (a tokenizer by its name, a policy by
    its total): it is listed and never emptied, so an erase does not make
    the process load a vocabulary again; the registry's test searches
    those too for an erased user's text.
    """

    def remember(function: Callable[..., T]) -> _lru_cache_wrapper[T]:
        kept = lru_cache(maxsize=maxsize)(function)
        _FUNCTIONS.append(kept)
        if not holds_text:
            _KEPT.add(id(kept))
        return kept

    return remember


def registered() -> tuple[list[Forgetting], list[_lru_cache_wrapper[Any]]]:
    """The registered caches alive now, and the functions :func:`remembered` made."""
    return list(_CACHES), list(_FUNCTIONS)


def forget_everything() -> int:
    """Empty every registered cache and every remembered function that may hold text; how
    many were registered."""
    caches, functions = registered()
    for cache in caches:
        cache.clear()
    for function in functions:
        if id(function) not in _KEPT:
            function.cache_clear()
    return len(caches) + len(functions)
