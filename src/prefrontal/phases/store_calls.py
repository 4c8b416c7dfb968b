"""Store calls with retries: transient errors only, within the turn's remaining time.

Stores never own time. The retry policy lives here, outside them: a
:class:`~prefrontal.errors.TransientStoreError` is retried with jittered
exponential backoff while attempts and the deadline allow; any other error,
and cancellation, goes straight through.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential_jitter,
)

from prefrontal.errors import TransientStoreError
from prefrontal.phases.state import TurnState

T = TypeVar("T")
FIRST_BACKOFF_S = 0.005
BACKOFF = wait_exponential_jitter(multiplier=0.01, max=0.1, jitter=0.005)
"""After the first 5 ms: 10 ms, 20 ms ... at most 100 ms, each plus up to 5 ms of jitter."""


async def call_store(turn: TurnState, phase: str, call: Callable[[], Awaitable[T]]) -> T:
    """Run ``call``, retrying transient store errors; count attempts under ``phase``.

    The first attempt runs directly, so the common case costs nothing extra;
    only a transient failure enters tenacity's retry loop.
    """
    try:
        return await call()
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
            return await call()
    raise AssertionError("unreachable: tenacity re-raises the last error")  # pragma: no cover
