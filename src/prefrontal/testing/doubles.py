"""Test doubles that wrap any store: make it slow, make it fail.

Both forward every async method of the wrapped store, so they stand in for
any store kind::

    stores = Stores.in_memory()
    slow = stores.replace(episodic=DelayedStore(stores.episodic, 0.150))
    broken = stores.replace(semantic=FailingStore(stores.semantic, error=StoreError("down")))
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import anyio

from prefrontal.errors import StoreError


class _Wrapper:
    """Forwards attribute access to ``store``, wrapping its coroutine methods."""

    def __init__(self, store: Any) -> None:
        self.wrapped = store

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.wrapped, name)
        if not inspect.iscoroutinefunction(attribute):
            return attribute
        return self._wrap(name, attribute)

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        raise NotImplementedError


class DelayedStore(_Wrapper):
    """Answers every call after ``seconds`` (``math.inf``: never answers).

    The delay is an ``anyio.sleep``, so it is cancellable like real I/O.
    ``methods`` limits the delay to the named methods. ``calls`` counts the
    delayed calls started.
    """

    def __init__(
        self, store: Any, seconds: float, *, methods: tuple[str, ...] | None = None
    ) -> None:
        super().__init__(store)
        if seconds < 0:
            raise ValueError(f"seconds must be >= 0, got {seconds}")
        self.seconds = seconds
        self.methods = methods
        self.calls = 0

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        if self.methods is not None and name not in self.methods:
            return method

        async def delayed(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if math.isinf(self.seconds):
                await anyio.sleep_forever()
            await anyio.sleep(self.seconds)
            return await method(*args, **kwargs)

        return delayed


class FailingStore(_Wrapper):
    """Raises ``error`` from every call, or only from the first ``times`` calls.

    With ``times`` set, later calls reach the wrapped store: a transient
    failure. ``methods`` limits the failure to the named methods.
    """

    def __init__(
        self,
        store: Any,
        error: BaseException | None = None,
        *,
        times: int | None = None,
        methods: tuple[str, ...] | None = None,
    ) -> None:
        super().__init__(store)
        self.error = error if error is not None else StoreError("store unavailable")
        self.times = times
        self.methods = methods
        self.failures = 0

    def _should_fail(self, name: str) -> bool:
        if self.methods is not None and name not in self.methods:
            return False
        return self.times is None or self.failures < self.times

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        async def failing(*args: Any, **kwargs: Any) -> Any:
            if self._should_fail(name):
                self.failures += 1
                raise self.error
            return await method(*args, **kwargs)

        return failing
