"""Buffer events and the subscribers that receive them.

Events are delivered synchronously, in order, after the change they describe
is complete, so a subscriber always sees a buffer within its bounds. A
subscriber that raises is logged and skipped: a broken listener never breaks
the buffer or the turn.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

import structlog
from pydantic import Field

from prefrontal.buffer.config import OverflowPolicy
from prefrontal.buffer.models import BufferItem, BufferModel
from prefrontal.stores.records import Timestamp

_log = structlog.get_logger("prefrontal.buffer")


class EventKind(StrEnum):
    """What happened."""

    ADDED = "added"
    UPDATED = "updated"
    EVICTED = "evicted"
    CLEARED = "cleared"
    SESSION_STARTED = "session_started"
    SESSION_ENDED = "session_ended"


class BufferEvent(BufferModel):
    """One change to a buffer: which item, why, and the buffer's size after it.

    An ``evicted`` event carries its victim: ``victim`` is the item as it was
    when it left (its id, its tokens, its content, so a subscriber may keep
    it), and ``policy`` the buffer's overflow policy, as a value.
    ``total_tokens`` and ``total_items`` are the buffer's, after the whole
    change (a newcomer that made room included), never the victim's.
    """

    kind: EventKind
    at: Timestamp
    item_id: str | None = None
    reason: str | None = None
    total_tokens: int = Field(ge=0)
    total_items: int = Field(ge=0)
    details: dict[str, Any] = Field(default_factory=dict)
    victim: BufferItem | None = None
    policy: OverflowPolicy | None = None


Subscriber = Callable[[BufferEvent], None]


class EventBus:
    """The subscribers of one buffer."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Deliver every later event to ``subscriber``; return a function that unsubscribes."""
        self._subscribers.append(subscriber)
        return lambda: self._unsubscribe(subscriber)

    def _unsubscribe(self, subscriber: Subscriber) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)

    def publish(self, event: BufferEvent) -> None:
        """Deliver ``event`` to every subscriber, in subscription order."""
        for subscriber in tuple(self._subscribers):
            try:
                subscriber(event)
            except Exception as error:
                _log.warning("buffer_subscriber_failed", kind=event.kind, error=repr(error))

    def __bool__(self) -> bool:
        return bool(self._subscribers)
