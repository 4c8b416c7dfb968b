"""PerLoop: one value per running event loop, kept only while that loop lives."""

from __future__ import annotations

import asyncio
import gc
import itertools

from prefrontal.per_loop import PerLoop


def test_each_loop_gets_its_own_value_and_keeps_it() -> None:
    """Calls in one loop share a value; another loop gets a new one."""
    counter = itertools.count()
    per_loop = PerLoop(lambda: next(counter))

    async def twice() -> tuple[int, int]:
        return per_loop.get(), per_loop.get()

    assert asyncio.run(twice()) == (0, 0)
    assert asyncio.run(twice()) == (1, 1)


def test_a_closed_loop_leaves_no_value_behind() -> None:
    """Once a loop is gone, its value is no longer held."""
    per_loop = PerLoop(object)

    async def touch() -> None:
        per_loop.get()

    for _ in range(3):
        asyncio.run(touch())
    gc.collect()
    assert len(per_loop._values) == 0
