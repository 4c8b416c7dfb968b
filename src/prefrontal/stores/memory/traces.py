"""In-memory trace store.

Each trace is kept as its JSON, beside the few fields a listing filters and
orders by. A trace is dozens of small objects (a record per phase, a usage
per section, their details); as JSON it is one the garbage collector never
walks (the heading and the pair holding both are two more), and it takes a
fraction of the memory. A process keeping its
10,000 newest traces held some 800,000 such objects, and every full
collection walked them all. Writing a trace serializes it (about 12
microseconds for a demo turn's); reading one back parses it (about 20),
unless it is among the documents :mod:`prefrontal.traces.documents`
remembers (the last few written or read): the same frozen trace again.
"""

from __future__ import annotations

import heapq
from datetime import datetime
from typing import NamedTuple

from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceQuery, search_words, searched_text, text_words
from prefrontal.traces.documents import parse, serialize
from prefrontal.traces.models import TurnTrace

DEFAULT_KEEP = 10_000
"""Traces an in-memory store keeps unless told otherwise: a process's memory stays bounded."""


class Heading(NamedTuple):
    """What a listing of traces filters and orders by, kept beside each trace's JSON.

    Strings, times and ``None`` only (the status is kept as its value): with
    the JSON and the pair holding both, a kept trace is two small objects
    the garbage collector walks, not dozens.
    """

    turn_id: str
    parent_turn_id: str | None
    agent_id: str
    user_id: str
    session_id: str
    status: str
    started_at: datetime
    words: str
    """The words of the user's message and the reply, each between spaces (for a search)."""

    @classmethod
    def of(cls, trace: TurnTrace) -> Heading:
        """The heading of ``trace``."""
        return cls(
            turn_id=trace.turn_id,
            parent_turn_id=trace.parent_turn_id,
            agent_id=trace.agent_id,
            user_id=trace.user_id,
            session_id=trace.session_id,
            status=trace.status.value,
            started_at=trace.started_at,
            words=f" {' '.join(text_words(searched_text(trace)))} ",
        )

    def matches(self, query: TraceQuery) -> bool:
        """True when the trace passes every filter of ``query``."""
        checks = (
            query.turn_id in (None, self.turn_id),
            query.parent_turn_id in (None, self.parent_turn_id),
            query.agent_id in (None, self.agent_id),
            query.user_id in (None, self.user_id),
            query.user_ids is None or self.user_id in query.user_ids,
            query.session_id in (None, self.session_id),
            query.status is None or query.status.value == self.status,
            query.since is None or self.started_at >= query.since,
            query.until is None or self.started_at < query.until,
            query.older_than is None or self.age() < query.older_than,
            query.newer_than is None or self.age() > query.newer_than,
            query.text is None or self.holds(query.text),
        )
        return all(checks)

    def holds(self, text: str) -> bool:
        """True when every word of ``text`` is a word of the trace (an exact match of each)."""
        words = search_words(text)
        return bool(words) and all(f" {word} " in self.words for word in words)

    def age(self) -> tuple[datetime, str]:
        """The order ``list`` and ``prune`` agree on (reverse it for newest first)."""
        return self.started_at, self.turn_id


class _Kept(NamedTuple):
    heading: Heading
    document: bytes

    def trace(self) -> TurnTrace:
        return parse(self.document)


class InMemoryTraceStore:
    """Traces in a dictionary keyed by turn id, at most ``keep`` of them (``None``: no bound).

    Past ``keep``, each ``put`` lets the oldest trace go, so a long-running
    process holds a bounded number of traces. The oldest is found in a heap
    of ``(started_at, turn_id)`` (entries of traces replaced or removed since
    are skipped when they come up), so a ``put`` costs ``O(log n)``, not a
    scan of every trace kept. What ``get`` and ``list`` return are equal to
    the traces put (frozen values; a recent one may be the very trace put).
    """

    def __init__(self, *, keep: int | None = DEFAULT_KEEP) -> None:
        if keep is not None and keep < 1:
            raise ValueError(f"keep must be at least 1 or None, got {keep}")
        self._traces: dict[str, _Kept] = {}
        self._keep = keep
        self._ages: list[tuple[datetime, str]] = []

    async def put(self, trace: TurnTrace) -> None:
        heading = Heading.of(trace)
        self._traces[trace.turn_id] = _Kept(heading, serialize(trace))
        if self._keep is None:
            return
        heapq.heappush(self._ages, heading.age())
        while len(self._traces) > self._keep:
            started_at, turn_id = heapq.heappop(self._ages)
            held = self._traces.get(turn_id)
            if held is not None and held.heading.started_at == started_at:
                del self._traces[turn_id]
        if len(self._ages) > 2 * len(self._traces) + 64:
            self._reindex()

    def _reindex(self) -> None:
        """The heap rebuilt from the traces held (drops the entries of those gone)."""
        if self._keep is None:
            return
        self._ages = [kept.heading.age() for kept in self._traces.values()]
        heapq.heapify(self._ages)

    async def get(self, tenant: Tenant, turn_id: str) -> TurnTrace | None:
        kept = self._traces.get(turn_id)
        if kept is None or not _owned_by(kept.heading, tenant):
            return None
        return kept.trace()

    async def list(self, query: TraceQuery) -> list[TurnTrace]:
        hits = [kept for kept in self._traces.values() if kept.heading.matches(query)]
        hits.sort(key=lambda kept: kept.heading.age(), reverse=not query.oldest_first)
        return [kept.trace() for kept in hits[: query.limit]]

    async def erase(self, tenant: Tenant) -> int:
        mine = [
            turn_id for turn_id, kept in self._traces.items() if _owned_by(kept.heading, tenant)
        ]
        for turn_id in mine:
            del self._traces[turn_id]
        self._reindex()
        return len(mine)

    async def prune(self, *, before: datetime | None = None, keep: int | None = None) -> int:
        ordered = sorted(self._traces.values(), key=lambda kept: kept.heading.age(), reverse=True)
        kept = [k for k in ordered if before is None or k.heading.started_at >= before]
        kept = kept if keep is None else kept[:keep]
        removed = len(self._traces) - len(kept)
        self._traces = {k.heading.turn_id: k for k in kept}
        self._reindex()
        return removed


def _owned_by(heading: Heading, tenant: Tenant) -> bool:
    return (heading.agent_id, heading.user_id) == (tenant.agent_id, tenant.user_id)
