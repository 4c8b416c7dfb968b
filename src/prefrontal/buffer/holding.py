"""The mechanism under the buffer: held items, their totals, counters and events.

:class:`Holding` knows nothing of admission or eviction policy. It keeps the
items with their token total, numbers insertions, counts what happened, and
refuses (with an internal error) any insertion that would break the bounds:
the policy layer above must have made room first.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from operator import attrgetter
from typing import Any

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.events import BufferEvent, EventBus, EventKind
from prefrontal.buffer.models import BufferItem
from prefrontal.buffer.policies import Eviction, EvictionReason
from prefrontal.buffer.snapshot import BufferCounters, BufferSnapshot
from prefrontal.errors import WorkingMemoryError
from prefrontal.trusted import assemble

_SEQ = attrgetter("seq")
"""An item's insertion number: the key of the insertion order."""
_ID = attrgetter("item_id")
_TOKENS = attrgetter("tokens")
_NO_COUNTS: dict[str, int] = BufferCounters().model_dump()
"""Every counter at zero (copied for each new buffer)."""


class Holding:
    """Items by id, the token total, the insertion counter, counters and subscribers."""

    def __init__(self, config: BufferConfig) -> None:
        self.config = config
        self.events = EventBus()
        self.items: dict[str, BufferItem] = {}
        self._ordered: tuple[BufferItem, ...] | None = ()
        self.changes = 0
        """Counts changes to the held items (what is worked out from them is kept till it moves)."""
        self.tokens = 0
        self.next_seq = 0
        self._counts = dict(_NO_COUNTS)
        self.started_at: datetime | None = None
        self.last_activity: datetime | None = None

    def ordered(self) -> tuple[BufferItem, ...]:
        """Every held item, in insertion order (sorted once per change, not once per call)."""
        if self._ordered is None:
            self._ordered = tuple(sorted(self.items.values(), key=_SEQ))
        return self._ordered

    def take_seq(self) -> int:
        """The next insertion number."""
        self.next_seq += 1
        return self.next_seq - 1

    def put(self, item: BufferItem) -> None:
        """Insert ``item``; raise if it is already held or would break the bounds."""
        if item.item_id in self.items:
            raise WorkingMemoryError(f"internal: {item.item_id!r} is already held")
        tokens = self.tokens + item.tokens
        if len(self.items) + 1 > self.config.max_items or tokens > self.config.max_tokens:
            raise WorkingMemoryError(
                f"internal: inserting {item.item_id!r} would exceed the buffer's bounds"
            )
        self.items[item.item_id] = item
        self._ordered = None
        self.changes += 1
        self.tokens = tokens

    def replace(self, item: BufferItem) -> None:
        """Swap a held item for its new version, which must not be larger."""
        old = self.items[item.item_id]
        if item.tokens > old.tokens:
            raise WorkingMemoryError(f"internal: {item.item_id!r} cannot grow in place")
        self.items[item.item_id] = item
        self._ordered = None
        self.changes += 1
        self.tokens += item.tokens - old.tokens

    def take_out(
        self,
        item: BufferItem,
        reason: EvictionReason,
        detail: str,
        *,
        count: bool = True,
        promoted_to: str | None = None,
    ) -> Eviction:
        """Remove ``item`` and say why (``count=False`` when it is about to come back);
        ``promoted_to`` is the long-term id it was written under before it left."""
        del self.items[item.item_id]
        self._ordered = None
        self.changes += 1
        self.tokens -= item.tokens
        if count:
            self.count("evicted")
        return Eviction(item=item, reason=reason, detail=detail, promoted_to=promoted_to)

    @property
    def counters(self) -> BufferCounters:
        """What the buffer has done over its life (assembled: counts only ever added to)."""
        return assemble(BufferCounters, dict(self._counts))

    def count(self, name: str, times: int = 1) -> None:
        """Add ``times`` (one) to the counter ``name`` (``admitted``, ``evicted``, ``turns``...)."""
        self._counts[name] += times

    def emit(
        self,
        kind: EventKind,
        at: datetime,
        item_id: str | None,
        reason: str,
        details: dict[str, Any] | None = None,
        victim: BufferItem | None = None,
    ) -> None:
        """Note activity at ``at`` and publish an event (built only when someone listens)."""
        self.last_activity = at
        if not self.events:
            return
        self.events.publish(
            BufferEvent(
                kind=kind,
                at=at,
                item_id=item_id,
                reason=reason,
                total_tokens=self.tokens,
                total_items=len(self.items),
                details=details or {},
                victim=victim,
                policy=None if victim is None else self.config.policy,
            )
        )

    def publish(self, evictions: Iterable[Eviction], at: datetime) -> None:
        """One ``evicted`` event per eviction, carrying its victim and the policy (and, for an
        item promoted before it left, its long-term id as ``details["promoted_to"]``)."""
        for eviction in evictions:
            details: dict[str, Any] = {"detail": eviction.detail, "tokens": eviction.item.tokens}
            if eviction.promoted_to is not None:
                details["promoted_to"] = eviction.promoted_to
            self.emit(
                EventKind.EVICTED,
                at,
                eviction.item_id,
                eviction.reason.value,
                details,
                victim=eviction.item,
            )

    def load(self, snapshot: BufferSnapshot) -> None:
        """Take the items, counters and times of ``snapshot`` (already checked)."""
        self.config = snapshot.config
        items = snapshot.items
        self.items = dict(zip(map(_ID, items), items, strict=True))
        self._ordered = items
        self.changes += 1
        self.tokens = sum(map(_TOKENS, items))
        self.next_seq = snapshot.next_seq
        self._counts = dict(snapshot.counters.__dict__)  # (its fields: ints, as model_dump)
        self.started_at = snapshot.started_at
        self.last_activity = snapshot.last_activity
