"""Phase 11, ``finalize``: seal the turn's trace, and name what the turn has to store.

The trace is sealed with every phase's record, this one's measured up to the
moment of sealing. Nothing is written here: the turn's writes (the trace,
the session's refreshed buffer, the recall counts of the memories that made
it into the context) are named by :func:`turn_writes` and run behind the
turn, concurrently, once its context is ready
(:mod:`prefrontal.orchestrator.writes`). So a slow or failing write can
neither delay the context nor mark a good turn degraded: a turn is
``degraded`` only when its context is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from prefrontal.bundle.models import Section
from prefrontal.config import PhaseName
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.stores.long_term import MemoryStore
from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnTrace
from prefrontal.traces.phase_records import phase_record

NAME: PhaseName = "finalize"


@dataclass(frozen=True, slots=True)
class TurnWrite:
    """One write behind a turn: what it is (``trace``, ``buffer``, ``recall:episodic``), and it.

    ``call`` returns how many times it merged its change into a newer
    state that another writer saved first (0 for writes that never conflict).
    """

    kind: str
    call: Callable[[], Awaitable[int]]


def sealed(turn: TurnState, own: PhaseRecord) -> TurnTrace:
    """The turn's trace: every phase record so far plus ``own``."""
    others = [r for r in turn.records.values() if r.name != own.name]
    return turn.seal_trace([*others, own])


RECALLED = (Section.EPISODIC, Section.SEMANTIC)
"""The sections whose items' recall counts a turn records, in the order it writes them."""


def _recalled(turn: TurnState) -> dict[Section, list[str]]:
    """The ids of the items of each recalled section that made it into the context (one pass)."""
    ids: dict[Section, list[str]] = {section: [] for section in RECALLED}
    for fragment in turn.bundle.fragments if turn.bundle else ():
        found = ids.get(fragment.section)
        if found is not None:
            found.extend(fragment.provenance.item_ids)
    return ids


def _own_record(turn: TurnState) -> PhaseRecord:
    started = turn.started_ms.get(NAME, turn.elapsed_ms())
    return phase_record(
        name=NAME,
        index=turn.indices[NAME],
        status=PhaseStatus.OK,
        started_ms=round(started, 3),
        duration_ms=round(turn.elapsed_ms() - started, 3),
        budget_ms=turn.budgets_ms[NAME],
    )


def turn_writes(turn: TurnState, trace: TurnTrace) -> list[TurnWrite]:
    """What ``turn`` stores once its context is ready: ``trace``, its buffer, its recall counts."""
    writes = [TurnWrite("trace", _put_trace(turn, trace))]
    session = turn.saving
    if session is not None:
        at = turn.context.started_at

        async def save() -> int:
            before = session.merges
            await session.save(now=at)
            return session.merges - before

        writes.append(TurnWrite("buffer", save))
    stores = {Section.EPISODIC: turn.stores.episodic, Section.SEMANTIC: turn.stores.semantic}
    for section, ids in _recalled(turn).items():
        if ids:
            store = stores[section]
            writes.append(TurnWrite(f"recall:{section.value}", _record_recall(turn, store, ids)))
    return writes


def _put_trace(turn: TurnState, trace: TurnTrace) -> Callable[[], Awaitable[int]]:
    async def put() -> int:
        await turn.stores.traces.put(trace)
        return 0

    return put


def _record_recall(
    turn: TurnState, store: MemoryStore, ids: list[str]
) -> Callable[[], Awaitable[int]]:
    tenant, at = turn.tenant, turn.context.started_at

    async def record() -> int:
        await store.record_recall(tenant, ids, at)
        return 0

    return record


async def run(turn: TurnState) -> PhaseOutcome:
    """Seal the trace (the orchestrator writes it behind the turn)."""
    trace = sealed(turn, _own_record(turn))
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
