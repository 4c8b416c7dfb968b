"""The runner: executes the phase graph under the turn's deadline.

Loading phases (1-7) start as soon as the phases they need have ended,
concurrently, in one task group, under one deadline scope; in
``sequential`` mode they run one after another in the tuple's order. At the
deadline the loading phases still running are cancelled and marked
``timeout``; assembly phases (8-11) then run in order on what arrived, each
bounded by twice its time budget. A loading phase that others wait for must
leave them their time: it is cut when no more than the largest budget of its
dependents remains before the deadline, so a hung store upstream costs its
own section only, not those of the phases that wait for it. A phase that raises is recorded as
``failed`` and the turn goes on. Cancellation from the caller is never
caught: it cancels every phase.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.traces.models import ErrorRecord, PhaseRecord, PhaseStatus
from prefrontal.traces.seal import error_record

UNFINISHED = (PhaseStatus.FAILED, PhaseStatus.TIMEOUT, PhaseStatus.CANCELLED, PhaseStatus.SKIPPED)
ASSEMBLY_SLACK = 2.0


async def run_phases(phases: Sequence[PhaseSpec], turn: TurnState, *, sequential: bool) -> None:
    """Run every phase of ``phases`` on ``turn``, filling ``turn.records``."""
    loading = [p for p in phases if p.loads]
    with anyio.move_on_after(turn.seconds_left()) as deadline:
        if sequential:
            for phase in loading:
                await run_phase(phase, turn, limit_s=_leaving_room(phase, loading, turn))
        else:
            await _run_graph(loading, turn)
    if deadline.cancelled_caught:
        _mark_unfinished(loading, turn)
    for phase in (p for p in phases if not p.loads):
        budget_s = turn.budgets_ms[phase.name] / 1_000
        await run_phase(phase, turn, limit_s=budget_s * ASSEMBLY_SLACK)


async def _run_graph(phases: Sequence[PhaseSpec], turn: TurnState) -> None:
    ended = {p.name: anyio.Event() for p in phases}

    async def after_needs(phase: PhaseSpec) -> None:
        for need in phase.needs:
            await ended[need].wait()
        await run_phase(phase, turn, limit_s=_leaving_room(phase, phases, turn))
        ended[phase.name].set()

    async with anyio.create_task_group() as tg:
        for phase in phases:
            tg.start_soon(after_needs, phase)


def _leaving_room(phase: PhaseSpec, phases: Sequence[PhaseSpec], turn: TurnState) -> float | None:
    """Seconds ``phase`` may run and leave its dependents their budgets (``None``: no bound)."""
    reserve_ms = max((turn.budgets_ms[p.name] for p in phases if phase.name in p.needs), default=0)
    return max(turn.seconds_left() - reserve_ms / 1_000, 0.0) if reserve_ms else None


async def run_phase(phase: PhaseSpec, turn: TurnState, *, limit_s: float | None = None) -> None:
    """Run one phase and record how it ended (never raises but for cancellation)."""
    turn.started_ms[phase.name] = turn.elapsed_ms()
    try:
        with anyio.fail_after(limit_s):
            outcome = await phase.run(turn)
    except TimeoutError as exc:
        _record(phase, turn, PhaseStatus.TIMEOUT, PhaseOutcome(), exc)
    except Exception as exc:
        _record(phase, turn, PhaseStatus.FAILED, PhaseOutcome(), exc)
    else:
        _record(phase, turn, _status(phase, turn, outcome), outcome)


def _status(phase: PhaseSpec, turn: TurnState, outcome: PhaseOutcome) -> PhaseStatus:
    needs_failed = any(
        turn.records[n].status in UNFINISHED for n in phase.needs if n in turn.records
    )
    retried = turn.attempts.get(phase.name, 1) > 1
    foreign = phase.name in turn.foreign
    degraded = outcome.degraded or needs_failed or retried or foreign
    return PhaseStatus.DEGRADED if degraded else PhaseStatus.OK


def _record(
    phase: PhaseSpec,
    turn: TurnState,
    status: PhaseStatus,
    outcome: PhaseOutcome,
    error: BaseException | None = None,
) -> None:
    started = turn.started_ms[phase.name]
    duration = turn.elapsed_ms() - started
    budget = turn.budgets_ms[phase.name]
    warnings = list(outcome.warnings)
    if duration > budget:
        warnings.append(f"took {duration:.1f} ms, over its {budget:.0f} ms budget")
    if phase.name in turn.foreign:
        count = turn.foreign[phase.name]
        warnings.append(f"dropped {count} item(s) a store returned that this tenant may not see")
    attempts = turn.attempts.get(phase.name, 1)
    errors = (error_record(error, attempts),) if error is not None else ()
    turn.records[phase.name] = PhaseRecord(
        name=phase.name,
        index=turn.indices[phase.name],
        status=status,
        started_ms=round(started, 3),
        duration_ms=round(duration, 3),
        budget_ms=budget,
        items_loaded=outcome.items_loaded,
        tokens_loaded=outcome.tokens_loaded,
        items_dropped=outcome.items_dropped,
        tokens_dropped=outcome.tokens_dropped,
        attempts=turn.attempts.get(phase.name, 1),
        warnings=tuple(warnings),
        errors=errors,
        detail=dict(outcome.detail),
    )
    turn.observer.phase_ended(turn.context, turn.records[phase.name])


def _mark_unfinished(phases: Sequence[PhaseSpec], turn: TurnState) -> None:
    """Record the loading phases the deadline cut off as ``timeout``."""
    now = turn.elapsed_ms()
    finished = set(turn.records)
    for phase in phases:
        if phase.name in finished:
            continue
        began = phase.name in turn.started_ms
        started = turn.started_ms.setdefault(phase.name, now)
        waiting = ", ".join(n for n in phase.needs if n not in finished)
        reason = (
            f"cut at the {turn.context.deadline_ms:.0f} ms deadline"
            if began
            else f"never started: waiting for {waiting} at the deadline"
        )
        turn.records[phase.name] = PhaseRecord(
            name=phase.name,
            index=turn.indices[phase.name],
            status=PhaseStatus.TIMEOUT,
            started_ms=round(started, 3),
            duration_ms=round(now - started, 3),
            budget_ms=turn.budgets_ms[phase.name],
            warnings=(reason,),
            errors=(ErrorRecord(type="DeadlineExceeded", message=reason),),
        )
        turn.observer.phase_ended(turn.context, turn.records[phase.name])
