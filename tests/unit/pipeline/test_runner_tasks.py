"""The runner's economy of tasks and scopes: phases that follow one another share them."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import pytest

from prefrontal import PhaseStatus, Stores
from prefrontal.config import PhaseName
from prefrontal.orchestrator.runner import _leaving_room, run_phases
from prefrontal.phases import PHASES
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.together import Call, run_together
from tests.conftest import demo_request, orchestrator

pytestmark = pytest.mark.anyio
Run = Callable[[TurnState], Awaitable[PhaseOutcome]]


def _with_run(name: str, run: Run) -> tuple[PhaseSpec, ...]:
    return tuple(dataclasses.replace(p, run=run) if p.name == name else p for p in PHASES)


async def test_a_timeout_in_a_chain_leaves_the_next_phase_its_whole_limit(
    demo_stores: Stores,
) -> None:
    """When phase 8 hangs and is cut, phase 9 in the same task still gets twice its own budget."""
    ran: list[str] = []

    async def hang(turn: TurnState) -> PhaseOutcome:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def slowish(turn: TurnState) -> PhaseOutcome:
        await anyio.sleep(turn.budgets_ms["context_assembly"] * 1.2 / 1_000)
        ran.append("context_assembly")
        return PhaseOutcome()

    phases = tuple(
        dataclasses.replace(p, run=slowish) if p.name == "context_assembly" else p
        for p in _with_run("budget_allocation", hang)
    )
    turn = orchestrator(demo_stores)._new_turn(demo_request())
    await run_phases(phases, turn, sequential=False)
    assert turn.records["budget_allocation"].status is PhaseStatus.TIMEOUT
    assert turn.records["context_assembly"].status is not PhaseStatus.TIMEOUT
    assert ran == ["context_assembly"]


async def test_a_phase_that_times_out_itself_is_recorded_once(demo_stores: Stores) -> None:
    """A loading phase raising TimeoutError is a timeout, and the phases after it still run."""

    async def times_out(turn: TurnState) -> PhaseOutcome:
        raise TimeoutError("the phase's own wait")

    turn = orchestrator(demo_stores)._new_turn(demo_request())
    await run_phases(_with_run("consciousness", times_out), turn, sequential=True)
    assert turn.records["consciousness"].status is PhaseStatus.TIMEOUT
    assert len(turn.records) == len(PHASES)


async def test_run_together_runs_its_calls_at_the_same_time() -> None:
    """Two calls that each wait for the other finish: neither waits for the other to end."""
    first, second = anyio.Event(), anyio.Event()

    async def one() -> None:
        first.set()
        await second.wait()

    async def two() -> None:
        second.set()
        await first.wait()

    with anyio.fail_after(1):
        await run_together([one, two])
    assert first.is_set() and second.is_set()


async def test_run_together_raises_what_a_call_raised_and_cancels_the_rest() -> None:
    """A call that fails cancels the others, and the failure comes out as a group."""
    cancelled: list[bool] = []

    async def waits() -> None:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise

    async def fails() -> None:
        await anyio.lowlevel.checkpoint()
        raise ValueError("broken store")

    with pytest.raises(ExceptionGroup) as caught:
        await run_together([waits, fails])
    assert caught.group_contains(ValueError) and cancelled == [True]


async def test_run_together_not_at_once_runs_its_calls_in_order_in_this_task() -> None:
    """``at_once=False``: each call runs to its end before the next starts, in the caller's task."""
    ran: list[tuple[str, int]] = []

    def call(name: str) -> Call:
        async def run() -> None:
            ran.append((name, anyio.get_current_task().id))
            await anyio.lowlevel.checkpoint()
            ran.append((name, anyio.get_current_task().id))

        return run

    await run_together([call("a"), call("b"), call("c")], at_once=False)
    here = anyio.get_current_task().id
    assert ran == [(name, here) for name in "aabbcc"]


async def test_run_together_with_one_call_just_runs_it() -> None:
    """One call runs in the caller's task and its error comes out as it was raised."""

    async def fails() -> None:
        raise ValueError("alone")

    with pytest.raises(ValueError, match="alone"):
        await run_together([fails])


async def test_a_loading_phase_must_end_in_time_for_the_largest_budget_waiting_for_it(
    demo_stores: Stores,
) -> None:
    """Bounds are the turn's end less the largest budget that needs the phase; leaves have none."""
    turn = orchestrator(demo_stores)._new_turn(demo_request())
    loading = {p.name: p for p in PHASES if p.loads}
    bound = _leaving_room(list(loading.values()), turn, end=10.0)
    needing_phase_1: tuple[PhaseName, ...] = (
        "consciousness",
        "frontal_cortex",
        "conversation",
        "scratch_page",
    )
    first = max(turn.budgets_ms[name] for name in needing_phase_1)
    assert bound(loading["turn_context"]) == 10.0 - first / 1_000
    shared = [bound(loading[name]) for name in ("consciousness", "frontal_cortex", "conversation")]
    assert shared == [10.0 - turn.budgets_ms["episodic"] / 1_000] * 3
    assert [bound(loading[n]) for n in ("episodic", "semantic", "scratch_page")] == [math.inf] * 3
