"""``end_turn``'s copies of its records are the ones ``model_copy`` makes, field for field.

The exchange placed at its positions, the trace with its ending, the ending
with its steps and the steps renumbered are built unchecked
(:func:`prefrontal.trusted.evolve`) from values already valid; each must equal,
serialize as, and have the same set fields as ``model_copy(update=...)``.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import BaseModel

from prefrontal import Stores
from prefrontal.demo import seed
from prefrontal.exchange.models import ToolCall
from prefrontal.orchestrator.end_turn import STEP_ORDER, Steps, TurnEnder, _with_steps
from prefrontal.stores.exchange import Exchange
from prefrontal.traces.models import PhaseStatus
from tests.conftest import demo_request, fixed_clock
from tests.endturn_support import build

pytestmark = pytest.mark.anyio


def same(made: BaseModel, expected: BaseModel) -> None:
    assert made == expected
    assert made.model_dump_json() == expected.model_dump_json()
    assert made.model_fields_set == expected.model_fields_set


def placed_by_copies(exchange: Exchange, first: int) -> Exchange:
    """:meth:`Exchange.placed` the straightforward way."""
    memories = tuple(
        m.model_copy(update={"position": first + k}) for k, m in enumerate(exchange.memories)
    )
    where = {m.item_id: m.position for m in memories if m.position is not None}
    messages = tuple(
        m.model_copy(update={"metadata": m.metadata | {"position": where[m.item_id]}})
        if m.item_id in where
        else m
        for m in exchange.messages
    )
    return exchange.model_copy(update={"memories": memories, "messages": messages})


async def ended_records() -> tuple[TurnEnder, Exchange]:
    stores = Stores.in_memory()
    await seed(stores)
    orchestrator = build(stores)
    result = await orchestrator.start_turn(demo_request())
    ender = orchestrator._ender
    calls = (ToolCall(name="calendar", arguments={"day": "Friday"}, result="free at 10"),)
    at = fixed_clock() + timedelta(minutes=1)
    return ender, ender._records(result.trace, "Friday at ten.", "done", calls, at)


async def test_the_placed_exchange_is_the_copied_one() -> None:
    _, records = await ended_records()
    for first in (0, 7):
        same(records.placed(first), placed_by_copies(records, first))


async def test_the_trace_with_its_steps_is_the_copied_one() -> None:
    _, records = await ended_records()
    trace = records.trace
    assert trace is not None and trace.ending is not None
    steps = Steps()
    for name in ("summary", "buffer", "consolidation", "exchange"):
        steps.add(name, PhaseStatus.OK, 1.0, {"step": name})
    steps.add("buffer", PhaseStatus.FAILED, 2.0, {})
    renumbered = steps.records
    assert [r.index for r in renumbered] == [1, 2, 3, 4]
    ordered = sorted(steps.by_name.values(), key=lambda r: STEP_ORDER.index(r.name))
    expected = [r.model_copy(update={"index": n}) for n, r in enumerate(ordered, start=1)]
    for made, copied in zip(renumbered, expected, strict=True):
        same(made, copied)
    written = _with_steps(trace, steps)
    assert written.ending is not None
    update = {
        "steps": written.ending.steps,
        "duration_ms": written.ending.duration_ms,
        "errors": tuple(e for r in written.ending.steps for e in r.errors),
        "warnings": tuple(f"{r.name}: {w}" for r in written.ending.steps for w in r.warnings),
    }
    same(written, trace.model_copy(update={"ending": trace.ending.model_copy(update=update)}))
