"""Fixtures for the buffer tests: a word counter, a fixed clock, item factories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from prefrontal.buffer import BufferConfig, NewItem, OverflowPolicy, WorkingMemoryBuffer

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


def words(text: str) -> int:
    """A deterministic token counter: one token per word."""
    return len(text.split())


def at(seconds: float) -> datetime:
    """``T0`` plus ``seconds``."""
    return T0 + timedelta(seconds=seconds)


class Clock:
    """A clock that moves only when told to."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def item(content: str, **fields: Any) -> NewItem:
    """A new item with ``tokens`` defaulting to its word count."""
    fields.setdefault("tokens", words(content))
    return NewItem(content=content, **fields)


def make_buffer(
    policy: OverflowPolicy = OverflowPolicy.COMPOSITE, clock: Clock | None = None, **config: Any
) -> WorkingMemoryBuffer:
    """A buffer counting words, admitting everything unless a threshold is given."""
    config.setdefault("base_threshold", 0.0)
    return WorkingMemoryBuffer(
        BufferConfig(policy=policy, **config), count_tokens=words, clock=clock or Clock()
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()
