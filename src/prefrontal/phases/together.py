"""Store calls a phase makes at once, spending as few tasks as it can.

:func:`run_together` runs its calls concurrently: every call but the last in
a task of its own, the last in the caller's task, so ``n`` calls cost
``n - 1`` tasks and one call costs none; calls that cannot wait cost none.
Errors and cancellation behave as in a task group: one call failing
cancels the others and the group raises.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import anyio

Call = Callable[[], Coroutine[Any, Any, None]]


async def run_together(calls: Sequence[Call], *, at_once: bool = True) -> None:
    """Run ``calls`` concurrently and return when all have ended.

    ``at_once=False``: one after another, in order (for calls that cannot
    wait, where tasks would overlap nothing; see ``TurnState.overlap``).
    """
    if len(calls) <= 1 or not at_once:
        for call in calls:
            await call()
        return
    async with anyio.create_task_group() as tg:
        for call in calls[:-1]:
            tg.start_soon(call)
        await calls[-1]()
