"""Store calls with retries: transient errors only, within the turn's remaining time.

Stores never own time. The retry policy lives here, outside them: a
:class:`~prefrontal.errors.TransientStoreError` is retried with jittered
exponential backoff while attempts and the deadline allow; any other error,
and cancellation, goes straight through.

What a store raises is its own failure, never the turn's: a store's
``TimeoutError`` (a driver's, say) is a transient store error, not the
phase running out of time, and a ``CancelledError`` raised by a store that
nobody cancelled is a store error, not a cancellation of the turn.

Tenancy is checked twice: every store filters by tenant in its query, and
what comes back is checked again here. Anything the turn's tenant may not
see is dropped and counted in ``turn.foreign``; the runner reports it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

import anyio
import structlog
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential_jitter,
)

from prefrontal.errors import StoreError, TransientStoreError
from prefrontal.phases.state import TurnState
from prefrontal.stores.tenancy import may_see, seen_by

T = TypeVar("T")
_log = structlog.get_logger("prefrontal.tenancy")
FIRST_BACKOFF_S = 0.005
BACKOFF = wait_exponential_jitter(multiplier=0.01, max=0.1, jitter=0.005)
"""After the first 5 ms: 10 ms, 20 ms ... at most 100 ms, each plus up to 5 ms of jitter."""


async def call_store(turn: TurnState, phase: str, call: Callable[[], Awaitable[T]]) -> T:
    """Run ``call``, retrying transient store errors; count attempts under ``phase``.

    The first attempt runs directly, so the common case costs nothing extra;
    only a transient failure enters tenacity's retry loop.
    """
    return _screened(turn, phase, await _retried(turn, phase, call))


async def _retried(turn: TurnState, phase: str, call: Callable[[], Awaitable[T]]) -> T:
    try:
        return await _owned(call, phase)
    except TransientStoreError:
        if turn.config.store_attempts == 1:
            raise
    await anyio.sleep(FIRST_BACKOFF_S)
    retrying = AsyncRetrying(
        retry=retry_if_exception_type(TransientStoreError),
        stop=(
            stop_after_attempt(turn.config.store_attempts - 1)
            | stop_after_delay(turn.seconds_left())
        ),
        wait=BACKOFF,
        sleep=anyio.sleep,
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            turn.attempts[phase] = attempt.retry_state.attempt_number + 1
            return await _owned(call, phase)
    raise AssertionError("unreachable: tenacity re-raises the last error")  # pragma: no cover


def _screened(turn: TurnState, phase: str, result: T) -> T:
    """``result`` without what the turn's tenant may not see; drops counted under ``phase``."""
    tenant = turn.tenant
    if isinstance(result, list):
        kept = seen_by(result, tenant)
        dropped = len(result) - len(kept)
        screened: object = kept
    else:
        dropped = 0 if may_see(result, tenant) else 1
        screened = None if dropped else result
    if dropped:
        turn.foreign[phase] = turn.foreign.get(phase, 0) + dropped
        _log.warning("foreign_items_dropped", phase=phase, count=dropped, turn=turn.context.turn_id)
    return cast(T, screened)


async def _owned(call: Callable[[], Awaitable[T]], phase: str) -> T:
    """``await call()``, with a store's own timeouts and stray cancellations made store errors."""
    try:
        return await call()
    except TimeoutError as error:
        raise TransientStoreError(f"the store timed out: {error}", store=phase) from error
    except anyio.get_cancelled_exc_class() as error:
        if _cancelled_from_outside():
            raise
        raise StoreError("the store raised a cancellation nobody asked for", store=phase) from error


def _cancelled_from_outside() -> bool:
    """True when this task has really been asked to stop (a scope, a caller), not only told so."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # pragma: no cover - not on asyncio: cancellation is always real
        return True
    return task is None or task.cancelling() > 0


M = TypeVar("M")


def one_of(value: object, expected: type[M], phase: str) -> M | None:
    """``value`` when it is an ``expected`` or ``None``; else a StoreError naming what came back.

    A phase checks what a store returned before keeping it on the turn, so a
    broken backend fails that phase and leaves nothing malformed for others.
    """
    if value is None or isinstance(value, expected):
        return value
    raise StoreError(
        f"the store returned {type(value).__name__}, not {expected.__name__}", store=phase
    )


def list_of(values: object, expected: type[M], phase: str) -> list[M]:
    """``values`` when it is a list of ``expected``; else a StoreError (see :func:`one_of`)."""
    if isinstance(values, list) and all(isinstance(v, expected) for v in values):
        return values
    raise StoreError(
        f"the store returned something other than a list of {expected.__name__}", store=phase
    )
