"""Phase 11, ``finalize``: seal the turn's trace, write it, note what was recalled.

The trace is sealed with every phase's record, this one's measured up to the
moment of sealing. Recall counts of the memories that made it into the
context are updated in the same step. When writing fails, the trace the turn
returns is sealed again with this phase failed, and the error goes on to the
runner.
"""

from __future__ import annotations

import anyio

from prefrontal.bundle.models import Section
from prefrontal.config import PhaseName
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store
from prefrontal.stores.long_term import MemoryStore
from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnTrace
from prefrontal.traces.seal import error_record

NAME: PhaseName = "finalize"


def sealed(turn: TurnState, own: PhaseRecord) -> TurnTrace:
    """The turn's trace: every phase record so far plus ``own``."""
    others = [r for r in turn.records.values() if r.name != own.name]
    return turn.seal_trace([*others, own])


def _recalled(turn: TurnState, section: Section) -> list[str]:
    bundle = turn.bundle
    return [i for f in bundle.section(section) for i in f.provenance.item_ids] if bundle else []


async def _recall(turn: TurnState, store: MemoryStore, ids: list[str]) -> None:
    at, tenant = turn.context.started_at, turn.tenant
    await call_store(turn, NAME, lambda: store.record_recall(tenant, ids, at))


def _own_record(turn: TurnState) -> PhaseRecord:
    started = turn.started_ms.get(NAME, turn.elapsed_ms())
    return PhaseRecord(
        name=NAME,
        index=turn.indices[NAME],
        status=PhaseStatus.OK,
        started_ms=round(started, 3),
        duration_ms=round(turn.elapsed_ms() - started, 3),
        budget_ms=turn.budgets_ms[NAME],
    )


async def _write(turn: TurnState, trace: TurnTrace) -> None:
    """Write the trace and update recall counts, concurrently."""
    async with anyio.create_task_group() as tg:
        for section, store in (
            (Section.EPISODIC, turn.stores.episodic),
            (Section.SEMANTIC, turn.stores.semantic),
        ):
            ids = _recalled(turn, section)
            if ids:
                tg.start_soon(_recall, turn, store, ids)
        await call_store(turn, NAME, lambda: turn.stores.traces.put(trace))


async def run(turn: TurnState) -> PhaseOutcome:
    """Seal and write the trace; update recall counts concurrently."""
    own = _own_record(turn)
    trace = sealed(turn, own)
    try:
        await _write(turn, trace)
    except Exception as error:
        attempts = turn.attempts.get(NAME, 1)
        errors = (error_record(error, attempts),)
        failed = own.model_copy(
            update={"status": PhaseStatus.FAILED, "errors": errors, "attempts": attempts}
        )
        turn.trace = sealed(turn, failed)
        raise
    turn.trace = trace
    return PhaseOutcome(detail={"ready_for_router": trace.ready_for_router})


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=50,
    needs=("working_memory_init",),
    reads=frozenset({"bundle", "dropped", "sections"}),
    writes=frozenset({"trace"}),
    loads=False,
)
