"""The runner: executes the phase graph under the turn's deadline.

Loading phases (1-7) start as soon as the phases they need have ended,
concurrently, in one task group, under one deadline scope; in
``sequential`` mode they run one after another in the tuple's order. Phases
that follow one another share a task and a cancel scope (its deadline moved
as each starts), so a turn spends a task only where phases run at once. At the
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

import math
from collections.abc import Callable, Sequence
from itertools import pairwise

import anyio
from anyio.abc import TaskGroup

from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.traces.models import ErrorRecord, PhaseRecord, PhaseStatus
from prefrontal.traces.phase_records import phase_record
from prefrontal.traces.seal import error_record

UNFINISHED = (PhaseStatus.FAILED, PhaseStatus.TIMEOUT, PhaseStatus.CANCELLED, PhaseStatus.SKIPPED)
ASSEMBLY_SLACK = 2.0
Limit = Callable[[PhaseSpec], float]
"""When a phase must end, on anyio's clock, computed when it starts (``math.inf``: no bound)."""
Next = Callable[[PhaseSpec], "PhaseSpec | None"]
"""The phase to run next in the same task once one has ended (``None``: the task is done)."""


async def run_phases(phases: Sequence[PhaseSpec], turn: TurnState, *, sequential: bool) -> None:
    """Run every phase of ``phases`` on ``turn``, filling ``turn.records``."""
    loading = [p for p in phases if p.loads]
    end = anyio.current_time() + turn.seconds_left()
    leaving_room = _leaving_room(loading, turn, end)
    with anyio.CancelScope(deadline=end) as deadline:
        if sequential:
            await _run_chain(loading, turn, leaving_room)
        else:
            await _run_graph(loading, turn, leaving_room)
    if deadline.cancelled_caught:
        _mark_unfinished(loading, turn)
    assembly = [p for p in phases if not p.loads]
    await _run_chain(assembly, turn, lambda p: _own_bound(p, turn))


async def _run_chain(phases: Sequence[PhaseSpec], turn: TurnState, limit: Limit) -> None:
    """Run ``phases`` one after another in this task, each within its ``limit``."""
    if not phases:
        return
    following = {a.name: b for a, b in pairwise(phases)}
    await _run_in_task(phases[0], turn, limit, lambda p: following.get(p.name))


async def _run_graph(phases: Sequence[PhaseSpec], turn: TurnState, limit: Limit) -> None:
    """Start each phase as soon as the phases it needs have ended.

    A phase that ends hands its task to the first phase it made ready and
    starts the others in tasks of their own, so a task is spawned only
    where phases really run at the same time. While they run,
    ``turn.spawn`` starts reads ahead in the same task group
    (:mod:`prefrontal.phases.ahead`), so they have ended before assembly.
    """
    roots = [p for p in phases if not p.needs]
    try:
        async with anyio.create_task_group() as tg:
            graph = _Graph(phases, turn, limit, tg)
            turn.spawn = tg.start_soon
            for other in roots[1:]:
                tg.start_soon(_run_in_task, other, turn, limit, graph.after)
            if roots:
                await _run_in_task(roots[0], turn, limit, graph.after)
    finally:
        turn.spawn = None


class _Graph:
    """Which phases an ended phase makes ready, for one turn's task group.

    A class rather than a closure that names itself: a turn's objects then
    form no reference cycle, so they are freed by reference counting when
    the turn ends instead of waiting for the garbage collector.
    """

    __slots__ = ("_dependents", "_limit", "_tg", "_turn", "_waiting")

    def __init__(
        self, phases: Sequence[PhaseSpec], turn: TurnState, limit: Limit, tg: TaskGroup
    ) -> None:
        self._waiting = {p.name: set(p.needs) for p in phases}
        self._dependents = {p.name: [d for d in phases if p.name in d.needs] for p in phases}
        self._turn, self._limit, self._tg = turn, limit, tg

    def after(self, phase: PhaseSpec) -> PhaseSpec | None:
        """Start all but the first of the phases ``phase`` made ready; hand on the first."""
        ready = []
        for dependent in self._dependents[phase.name]:
            waiting = self._waiting[dependent.name]
            waiting.discard(phase.name)
            if not waiting:
                ready.append(dependent)
        for other in ready[1:]:
            self._tg.start_soon(_run_in_task, other, self._turn, self._limit, self.after)
        return ready[0] if ready else None


async def _run_in_task(first: PhaseSpec, turn: TurnState, limit: Limit, after: Next) -> None:
    """Run ``first`` and the phases ``after`` hands on, in this task, each within its limit.

    One cancel scope serves the phases in turn (its deadline moved as each
    starts, when it differs); only a phase that times out costs a new one.
    Cancellation from outside is not this scope's and goes straight through.
    """
    phase: PhaseSpec | None = first
    while phase is not None:
        with anyio.CancelScope() as scope:
            while phase is not None and not scope.cancel_called:
                deadline = limit(phase)
                if deadline != scope.deadline:
                    scope.deadline = deadline
                await _run_recorded(phase, turn)
                phase = after(phase)
        if scope.cancelled_caught and phase is not None:
            _record(phase, turn, PhaseStatus.TIMEOUT, PhaseOutcome(), TimeoutError())
            phase = after(phase)


def _leaving_room(phases: Sequence[PhaseSpec], turn: TurnState, end: float) -> Limit:
    """Each of ``phases`` must end when it leaves those that wait for it their budgets.

    That is the turn's ``end`` less the largest budget among the phases
    that need it (no bound of its own when none does); computed once for
    the turn, so phases that follow one another with the same bound share it.
    """
    ends: dict[str, float] = {}
    for phase in phases:
        reserve_ms = max(
            (turn.budgets_ms[p.name] for p in phases if phase.name in p.needs), default=0
        )
        ends[phase.name] = end - reserve_ms / 1_000 if reserve_ms else math.inf
    return lambda phase: ends[phase.name]


def _own_bound(phase: PhaseSpec, turn: TurnState) -> float:
    """An assembly phase must end within its own budget, times the slack, from now."""
    return anyio.current_time() + turn.budgets_ms[phase.name] / 1_000 * ASSEMBLY_SLACK


async def _run_recorded(phase: PhaseSpec, turn: TurnState) -> None:
    """Run ``phase`` and record how it ended, unless it is cancelled (its caller records that)."""
    turn.started_ms[phase.name] = turn.elapsed_ms()
    try:
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
    record = turn.records[phase.name] = phase_record(
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
        attempts=attempts,
        warnings=warnings,
        errors=errors,
        detail=outcome.detail,
    )
    turn.observer.phase_ended(turn.context, record)


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
