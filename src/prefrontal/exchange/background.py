"""A bounded runner for work off the caller's path, owned by the orchestrator.

Structured concurrency: the runner is a task group entered with the
orchestrator (``async with Orchestrator(...)``) and left with it, after the
work in flight is done. At most ``limit`` jobs run or wait at once;
:meth:`BackgroundRunner.submit` waits for a slot beyond that, so nothing is
dropped. Jobs must handle their own errors (an escaping error would cancel
the orchestrator's task group), with one exception the runner takes itself:
a write the database refused because the user was erased there
(:class:`~prefrontal.errors.ErasedTenantError`, an erase made by another
process or service on the same database while the job ran) ends the job,
logged at info: its work belongs to a user who is gone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType

import anyio
import structlog
from anyio.abc import TaskGroup

from prefrontal.errors import ErasedTenantError

Job = Callable[[], Awaitable[None]]

_log = structlog.get_logger("prefrontal.background")


class BackgroundRunner:
    """Runs submitted jobs in its task group, at most ``limit`` at a time."""

    def __init__(self, limit: int) -> None:
        self._slots = anyio.Semaphore(limit)
        self._group: TaskGroup | None = None
        self._pending = 0
        self._idle = anyio.Event()
        self._idle.set()

    @property
    def running(self) -> bool:
        """True between ``__aenter__`` and ``__aexit__``: jobs can be submitted."""
        return self._group is not None

    async def __aenter__(self) -> BackgroundRunner:
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        group, self._group = self._group, None
        if group is None:
            return None
        return await group.__aexit__(exc_type, exc, tb)

    async def submit(self, job: Job) -> None:
        """Start ``job`` once a slot is free (waits for one; never drops the job)."""
        if self._group is None:
            raise RuntimeError("the background runner is not running")
        await self._slots.acquire()
        self._started()

        async def run() -> None:
            try:
                await job()
            except ErasedTenantError:
                _log.info("background_job_stopped_by_erase")
            finally:
                self._slots.release()
                self._ended()

        self._group.start_soon(run)

    async def wait(self) -> None:
        """Return once no job is running or waiting (at once when none is)."""
        while self._pending:
            await self._idle.wait()

    def _started(self) -> None:
        if self._pending == 0:
            self._idle = anyio.Event()
        self._pending += 1

    def _ended(self) -> None:
        self._pending -= 1
        if self._pending == 0:
            self._idle.set()
