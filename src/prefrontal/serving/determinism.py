"""Test-only: a server whose clock and ids are fixed, so that its turns can be compared.

A test that starts a server in a subprocess cannot hand it a clock object,
so it sets ``PREFRONTAL_SERVE_TEST_CLOCK`` to an ISO-8601 instant before
starting it. The server then runs on a :class:`SteppedClock` that starts at
that instant and moves one ``step`` forward before each operation (and
stands still within one), and on :class:`CountingIds` (``t0000000000000000000001``,
...). The same calls made in-process with the same clock and ids give the
same bundles. Never set it in production: every server started with it
hands out the same ids.

``PREFRONTAL_SERVE_TEST_DELAY_MS`` (test-only too) makes every turn wait
that long before it starts, so that a test can have turns in flight when it
stops the server.
"""

from __future__ import annotations

from datetime import datetime, timedelta

TEST_CLOCK_ENV = "PREFRONTAL_SERVE_TEST_CLOCK"
TEST_DELAY_ENV = "PREFRONTAL_SERVE_TEST_DELAY_MS"
DEFAULT_STEP = timedelta(seconds=30)


class SteppedClock:
    """A clock that reads ``start`` until :meth:`advance` moves it ``step`` forward."""

    def __init__(self, start: datetime, step: timedelta = DEFAULT_STEP) -> None:
        if start.tzinfo is None:
            raise ValueError("the test clock needs an aware instant (with a UTC offset)")
        self._now = start
        self._step = step

    def __call__(self) -> datetime:
        return self._now

    def advance(self) -> datetime:
        """Move one step forward and return the new reading."""
        self._now += self._step
        return self._now


class CountingIds:
    """Ids ``{prefix}0000000000000000000001``, ``...02``, ...: sortable, distinct, predictable."""

    def __init__(self, prefix: str = "t") -> None:
        self._prefix = prefix
        self._next = 0

    def __call__(self) -> str:
        self._next += 1
        return f"{self._prefix}{self._next:022d}"


def parse_instant(text: str) -> datetime:
    """The aware instant in ``text`` (ISO 8601; ``Z`` accepted)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"{TEST_CLOCK_ENV} must carry a UTC offset, got {text!r}")
    return moment
