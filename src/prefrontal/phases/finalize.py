"""Phase 11, ``finalize``: seal the turn's trace, write it, note what was recalled.

The trace is sealed with every phase's record, this one's measured up to the
moment of sealing. Recall counts of the memories that made it into the
context are updated in the same step.
"""

from __future__ import annotations

import anyio

from prefrontal.bundle.models import Section
from prefrontal.bundle.readiness import not_ready
from prefrontal.config import PhaseName
from prefrontal.phases.consciousness import governance_text
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store
from prefrontal.stores.long_term import MemoryStore
from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnStatus, TurnTrace

NAME: PhaseName = "finalize"
INDEX = 11
FAILED = (PhaseStatus.FAILED, PhaseStatus.TIMEOUT, PhaseStatus.CANCELLED)


def seal(turn: TurnState, own: PhaseRecord) -> TurnTrace:
    """The turn's trace: every phase record so far plus ``own``."""
    others = [r for r in turn.records.values() if r.name != own.name]
    records = sorted([*others, own], key=lambda r: r.index)
    errors = tuple(e for r in records for e in r.errors)
    degraded = any(r.status in FAILED for r in records)
    bundle = turn.bundle
    has_rules = turn.profile is not None and bool(governance_text(turn.profile))
    unready = not_ready(bundle, has_rules=has_rules, stores_failed=degraded)
    warnings = tuple(f"{r.name}: {w}" for r in records for w in r.warnings)
    warnings += tuple(f"{NAME}: not ready for the router: {reason}" for reason in unready)
    return TurnTrace(
        turn_id=turn.context.turn_id,
        parent_turn_id=turn.context.parent_turn_id,
        agent_id=turn.context.agent_id,
        user_id=turn.context.user_id,
        session_id=turn.context.session_id,
        started_at=turn.context.started_at,
        duration_ms=round(turn.elapsed_ms(), 3),
        deadline_ms=turn.context.deadline_ms,
        status=TurnStatus.DEGRADED if degraded else TurnStatus.OK,
        total_budget=turn.policy.total,
        total_tokens=bundle.total_tokens if bundle else 0,
        checksum=bundle.checksum if bundle else "",
        ready_for_router=not unready,
        phases=tuple(records),
        sections=tuple(turn.sections),
        dropped=tuple(turn.dropped),
        warnings=warnings,
        errors=errors,
        version=turn.version,
    )


def _recalled(turn: TurnState, section: Section) -> list[str]:
    bundle = turn.bundle
    return [i for f in bundle.section(section) for i in f.provenance.item_ids] if bundle else []


async def _recall(turn: TurnState, store: MemoryStore, ids: list[str]) -> None:
    at, tenant = turn.context.started_at, turn.tenant
    await call_store(turn, NAME, lambda: store.record_recall(tenant, ids, at))


async def run(turn: TurnState) -> PhaseOutcome:
    """Seal and write the trace; update recall counts concurrently."""
    started = turn.started_ms.get(NAME, turn.elapsed_ms())
    own = PhaseRecord(
        name=NAME,
        index=INDEX,
        status=PhaseStatus.OK,
        started_ms=round(started, 3),
        duration_ms=round(turn.elapsed_ms() - started, 3),
        budget_ms=turn.budgets_ms[NAME],
    )
    turn.trace = seal(turn, own)
    trace = turn.trace
    async with anyio.create_task_group() as tg:
        for section, store in (
            (Section.EPISODIC, turn.stores.episodic),
            (Section.SEMANTIC, turn.stores.semantic),
        ):
            ids = _recalled(turn, section)
            if ids:
                tg.start_soon(_recall, turn, store, ids)
        await call_store(turn, NAME, lambda: turn.stores.traces.put(trace))
    return PhaseOutcome(detail={"ready_for_router": trace.ready_for_router})
