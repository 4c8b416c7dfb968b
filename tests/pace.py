"""The machine's pace now, for timing bounds that hold on a loaded machine and still fail.

A promise such as "the turn returns within its deadline plus 50 ms" holds on a
quiet machine; on a shared one every turn's own work (assembling what was
loaded, unwinding a cancelled scope) takes longer too. Such a test times a
healthy turn of the demo just before and just after the turn it checks and
allows that pace on top of its promise: a few milliseconds when the machine
is quiet, more when every turn is slower. A turn not cut at its deadline (a
hung store waited for) still fails, whatever the load.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

import anyio

from prefrontal import Stores
from prefrontal.demo import seed
from tests.conftest import demo_request, orchestrator


async def healthy_turn_ms() -> float:
    """The wall time of a turn of the demo on fresh in-memory stores, in milliseconds.

    One turn, not warmed: the process's first is slower (a more generous bound), the
    others take what a warm one does.
    """
    stores = Stores.in_memory()
    await seed(stores)
    turns = orchestrator(stores)
    started = anyio.current_time()
    await turns.start_turn(demo_request())
    elapsed_ms = (anyio.current_time() - started) * 1_000
    await stores.aclose()
    return elapsed_ms


def allowance_ms(slack_ms: float, *paces_ms: float) -> float:
    """``slack_ms`` plus twice the slowest of the healthy turns timed around the checked one."""
    return slack_ms + 2 * max(paces_ms)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No garbage collection inside: a pause collecting what earlier tests left (seconds in a
    large test process) falls before or after the timed turn, never in it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
