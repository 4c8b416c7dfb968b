"""Admission control with a limit learnt from how long admitted turns take."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal import AdmissionConfig, OverloadedError
from prefrontal.orchestrator.adaptive_limit import AdaptiveLimit
from prefrontal.orchestrator.admission import Admission

pytestmark = pytest.mark.anyio

SLOW = {"started": 0.0, "ended": 2.0, "target_s": 1.0}
FAST = {"started": 0.0, "ended": 0.5, "target_s": 1.0}


def test_a_slow_turn_cuts_the_limit_by_a_quarter() -> None:
    """One turn past its target takes a limit of 32 down to 24."""
    limit = AdaptiveLimit(32)
    limit.record(**SLOW)
    assert (limit.value, limit.cuts) == (24, 1)


def test_slow_turns_admitted_before_a_cut_cut_only_once() -> None:
    """Turns that started before the last cut ran at the old limit, so they do not cut again."""
    limit = AdaptiveLimit(32)
    limit.record(started=0.0, ended=2.0, target_s=1.0)
    limit.record(started=0.5, ended=2.5, target_s=1.0)
    assert limit.value == 24
    limit.record(started=2.1, ended=3.5, target_s=1.0)
    assert (limit.value, limit.cuts) == (18, 2)


def test_fast_turns_raise_the_limit_by_about_one_per_limits_worth() -> None:
    """After a cut to 6, six fast turns are not quite one more slot, seven are; never past the ceiling."""
    limit = AdaptiveLimit(8)
    limit.record(**SLOW)
    assert limit.value == 6
    for _ in range(6):
        limit.record(**FAST)
    assert limit.value == 6
    limit.record(**FAST)
    assert limit.value == 7
    for _ in range(100):
        limit.record(**FAST)
    assert limit.value == 8


def test_the_limit_never_falls_below_its_floor() -> None:
    """However many cuts, the limit stays at the floor."""
    limit = AdaptiveLimit(32, floor=3)
    for step in range(50):
        limit.record(started=float(step), ended=step + 0.9, target_s=0.1)
    assert limit.value == 3


@pytest.mark.parametrize(("floor", "ceiling"), [(0, 4), (5, 4)])
def test_a_floor_outside_one_to_the_ceiling_is_refused(floor: int, ceiling: int) -> None:
    """A floor below 1 or above the ceiling is a configuration error, said at once."""
    with pytest.raises(ValueError, match="floor"):
        AdaptiveLimit(ceiling, floor=floor)


@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 10)), max_size=200))
def test_the_limit_stays_within_floor_and_ceiling(runs: list[tuple[float, float]]) -> None:
    """Any sequence of turn durations leaves the limit between its floor and its ceiling."""
    limit = AdaptiveLimit(16, floor=2)
    clock = 0.0
    for duration, gap in runs:
        limit.record(started=clock, ended=clock + duration, target_s=1.0)
        clock += gap
        assert 2 <= limit.value <= 16


async def _hold(admission: Admission, release: anyio.Event, target_s: float = 10.0) -> None:
    async with admission.admitted(5.0, target_s):
        await release.wait()


async def test_waiting_turns_are_granted_slots_in_arrival_order() -> None:
    """With one slot, the turns waiting for it get it first come, first served."""
    admission = Admission(AdmissionConfig(max_turns_in_flight=1, max_wait_ms=5_000))
    order: list[int] = []
    release = anyio.Event()

    async def turn(number: int) -> None:
        async with admission.admitted(5.0, 10.0):
            order.append(number)

    async with anyio.create_task_group() as group:
        group.start_soon(_hold, admission, release)
        await anyio.wait_all_tasks_blocked()
        for number in range(4):
            group.start_soon(turn, number)
            await anyio.wait_all_tasks_blocked()
        release.set()
    assert order == [0, 1, 2, 3]
    assert admission.in_flight == 0


async def test_a_cancelled_waiter_leaves_no_slot_taken() -> None:
    """A turn cancelled while it waits for a slot neither holds one nor blocks the next."""
    admission = Admission(AdmissionConfig(max_turns_in_flight=1, max_wait_ms=5_000))
    release = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_hold, admission, release)
        await anyio.wait_all_tasks_blocked()
        with anyio.move_on_after(0.01) as waited:
            async with admission.admitted(5.0, 10.0):
                pytest.fail("admitted while the only slot was held")
        assert waited.cancelled_caught
        release.set()
    async with admission.admitted(5.0, 10.0):
        assert admission.in_flight == 1
    assert admission.in_flight == 0


async def test_slow_turns_lower_how_many_run_at_once() -> None:
    """After turns that overran their target, fewer are admitted at once and the rest refused."""
    config = AdmissionConfig(max_turns_in_flight=4, min_turns_in_flight=1, max_wait_ms=10)
    admission = Admission(config)
    for _ in range(3):
        async with admission.admitted(5.0, target_s=0.0):
            await anyio.sleep(0.002)
    assert admission.limit is not None
    assert admission.limit.value == 1
    release = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_hold, admission, release)
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(OverloadedError, match="1 turns are in flight"):
            async with admission.admitted(5.0, 10.0):
                pass
        release.set()
    assert admission.refused == 1


async def test_a_fixed_limit_does_not_learn() -> None:
    """With ``adaptive=False`` slow turns leave the limit at ``max_turns_in_flight``."""
    admission = Admission(AdmissionConfig(max_turns_in_flight=4, adaptive=False))
    for _ in range(3):
        async with admission.admitted(5.0, target_s=0.0):
            await anyio.sleep(0.002)
    assert admission.limit is not None
    assert admission.limit.value == 4


async def test_a_raising_turn_gives_back_its_slot_and_teaches_nothing() -> None:
    """A turn that raises releases its slot and leaves the limit where it was."""
    admission = Admission(AdmissionConfig(max_turns_in_flight=4))

    async def failing_turn() -> None:
        async with admission.admitted(5.0, target_s=0.0):
            await anyio.sleep(0.002)
            raise RuntimeError("the turn failed")

    with pytest.raises(RuntimeError):
        await failing_turn()
    assert admission.in_flight == 0
    assert admission.limit is not None
    assert admission.limit.value == 4
