"""A healthy turn leaves no reference cycle: its objects are freed when it ends.

Without cycles, everything a turn allocated (its state, fragments, buffer,
trace records, the scopes of its tasks) is freed by reference counting the
moment the turn is done. With one cycle anywhere in that graph, the whole
turn waits for the garbage collector, and under many concurrent turns the
collector's full passes over that growing heap become the largest cost of
the process (``docs/performance.md``). Each case runs start_turn and
end_turn on new and continuing sessions with the collector off, then asks
it what it would have had to free. A turn that times out or fails may still
leave cycles (an exception holds the frames it passed through); these cases
are of turns that went well.
"""

from __future__ import annotations

import gc
import types
from collections import Counter

import pytest

from prefrontal import Orchestrator, Stores
from prefrontal.demo import seed
from prefrontal.testing import DelayedStore
from tests.conftest import demo_request, fixed_clock

pytestmark = pytest.mark.anyio

REPLY = "Booked: the flight to Lisbon leaves on Tuesday at nine."


def ours(thing: object) -> bool:
    """Whether ``thing`` is prefrontal's: an instance of its classes, or its function or frame."""
    if isinstance(thing, types.FunctionType):
        return str(thing.__module__).startswith("prefrontal.")
    if isinstance(thing, types.FrameType):
        return "/prefrontal/" in thing.f_code.co_filename
    return type(thing).__module__.startswith("prefrontal.")


class CycleCheck:
    """The collector off, then what it finds: the garbage held only by reference cycles.

    The collector's earlier state (on or off) is restored on the way out.
    """

    def __enter__(self) -> CycleCheck:
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        self.found: Counter[str] = Counter()
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            gc.collect()
            self.found = Counter(type(x).__qualname__ for x in gc.garbage if ours(x))
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            if self._was_enabled:
                gc.enable()


async def run_turns(turns: Orchestrator, sessions: list[str]) -> None:
    for session in sessions:
        result = await turns.start_turn(demo_request(session_id=session))
        await turns.end_turn(result, REPLY)
        await turns.wait_background()


@pytest.mark.parametrize("waits", [False, True], ids=["as-built", "every-store-may-wait"])
async def test_turns_leave_no_reference_cycles(stores: Stores, waits: bool) -> None:
    """On each backend, in order and as a graph (stores wrapped so that they may wait)."""
    await seed(stores)
    if waits:
        stores = stores.replace(**{kind: DelayedStore(store, 0) for kind, store in stores.items()})
    async with Orchestrator(stores, clock=fixed_clock) as turns:
        await run_turns(turns, ["warm-up", "warm-up"])
        with CycleCheck() as check:
            await run_turns(turns, ["new-1", "continuing", "continuing", "new-2"])
    assert check.found == Counter(), f"left in reference cycles: {dict(check.found)}"


async def test_the_check_finds_a_cycle() -> None:
    """What a cycle holds is found and named, whether prefrontal's objects form it or hang on it;
    a cycle of other objects alone is not counted."""
    with CycleCheck() as check:
        holder: dict[str, object] = {"request": demo_request()}
        holder["self"] = holder
        stores = Stores.in_memory()
        box: list[object] = [stores]
        box.append(box)
        del holder, box, stores
    assert check.found["TurnRequest"] == 1
    assert check.found["Stores"] == 1
    with CycleCheck() as check:
        alone: list[object] = []
        alone.append(alone)
        del alone
    assert check.found == Counter()
