"""In-memory trace store."""

from __future__ import annotations

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


class InMemoryTraceStore:
    """Traces in a dictionary keyed by turn id."""

    def __init__(self) -> None:
        self._traces: dict[str, TurnTrace] = {}

    async def put(self, trace: TurnTrace) -> None:
        self._traces[trace.turn_id] = trace

    async def get(self, tenant: Tenant, turn_id: str) -> TurnTrace | None:
        trace = self._traces.get(turn_id)
        if trace is None or (trace.agent_id, trace.user_id) != (tenant.agent_id, tenant.user_id):
            return None
        return trace

    async def list(self, query: TraceQuery) -> list[TurnTrace]:
        hits = [t for t in self._traces.values() if matches(t, query)]
        hits.sort(key=lambda t: (t.started_at, t.turn_id), reverse=True)
        return hits[: query.limit]

    async def erase(self, tenant: Tenant) -> int:
        mine = [
            turn_id
            for turn_id, trace in self._traces.items()
            if (trace.agent_id, trace.user_id) == (tenant.agent_id, tenant.user_id)
        ]
        for turn_id in mine:
            del self._traces[turn_id]
        return len(mine)
