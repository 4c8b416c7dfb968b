"""In-memory trace store."""

from __future__ import annotations

import heapq
from datetime import datetime

from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceQuery
from prefrontal.traces.models import TurnTrace


def matches(trace: TurnTrace, query: TraceQuery) -> bool:
    """True when ``trace`` passes every filter of ``query``."""
    checks = (
        query.turn_id in (None, trace.turn_id),
        query.parent_turn_id in (None, trace.parent_turn_id),
        query.agent_id in (None, trace.agent_id),
        query.user_id in (None, trace.user_id),
        query.session_id in (None, trace.session_id),
        query.status in (None, trace.status),
        query.since is None or trace.started_at >= query.since,
        query.until is None or trace.started_at < query.until,
    )
    return all(checks)


DEFAULT_KEEP = 10_000
"""Traces an in-memory store keeps unless told otherwise: a process's memory stays bounded."""


def newest_first(trace: TurnTrace) -> tuple[datetime, str]:
    """The order ``list`` and ``prune`` agree on (reverse it for newest first)."""
    return trace.started_at, trace.turn_id


class InMemoryTraceStore:
    """Traces in a dictionary keyed by turn id, at most ``keep`` of them (``None``: no bound).

    Past ``keep``, each ``put`` lets the oldest trace go, so a long-running
    process holds a bounded number of traces. The oldest is found in a heap
    of ``(started_at, turn_id)`` (entries of traces replaced or removed since
    are skipped when they come up), so a ``put`` costs ``O(log n)``, not a
    scan of every trace kept.
    """

    def __init__(self, *, keep: int | None = DEFAULT_KEEP) -> None:
        if keep is not None and keep < 1:
            raise ValueError(f"keep must be at least 1 or None, got {keep}")
        self._traces: dict[str, TurnTrace] = {}
        self._keep = keep
        self._ages: list[tuple[datetime, str]] = []

    async def put(self, trace: TurnTrace) -> None:
        self._traces[trace.turn_id] = trace
        if self._keep is None:
            return
        heapq.heappush(self._ages, newest_first(trace))
        while len(self._traces) > self._keep:
            started_at, turn_id = heapq.heappop(self._ages)
            held = self._traces.get(turn_id)
            if held is not None and held.started_at == started_at:
                del self._traces[turn_id]
        if len(self._ages) > 2 * len(self._traces) + 64:
            self._reindex()

    def _reindex(self) -> None:
        """The heap rebuilt from the traces held (drops the entries of those gone)."""
        if self._keep is None:
            return
        self._ages = [newest_first(t) for t in self._traces.values()]
        heapq.heapify(self._ages)

    async def get(self, tenant: Tenant, turn_id: str) -> TurnTrace | None:
        trace = self._traces.get(turn_id)
        if trace is None or (trace.agent_id, trace.user_id) != (tenant.agent_id, tenant.user_id):
            return None
        return trace

    async def list(self, query: TraceQuery) -> list[TurnTrace]:
        hits = [t for t in self._traces.values() if matches(t, query)]
        hits.sort(key=newest_first, reverse=True)
        return hits[: query.limit]

    async def erase(self, tenant: Tenant) -> int:
        mine = [
            turn_id
            for turn_id, trace in self._traces.items()
            if (trace.agent_id, trace.user_id) == (tenant.agent_id, tenant.user_id)
        ]
        for turn_id in mine:
            del self._traces[turn_id]
        self._reindex()
        return len(mine)

    async def prune(self, *, before: datetime | None = None, keep: int | None = None) -> int:
        ordered = sorted(self._traces.values(), key=newest_first, reverse=True)
        kept = [t for t in ordered if before is None or t.started_at >= before]
        kept = kept if keep is None else kept[:keep]
        removed = len(self._traces) - len(kept)
        self._traces = {t.turn_id: t for t in kept}
        self._reindex()
        return removed
