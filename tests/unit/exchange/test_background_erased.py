"""A background job whose write the database refused for an erased user ends quietly."""

from __future__ import annotations

import anyio
import pytest
from structlog.testing import capture_logs

from prefrontal.errors import ErasedTenantError
from prefrontal.exchange.background import BackgroundRunner

pytestmark = pytest.mark.anyio


async def test_a_refused_write_ends_its_job_and_spares_the_others() -> None:
    """A job refused by an erasure record (another process erased the user) is logged at
    info and ended; the runner and a job beside it go on."""
    finished = anyio.Event()
    gate = anyio.Event()

    async def refused() -> None:
        await gate.wait()
        raise ErasedTenantError("this user was erased from the database", store="traces")

    async def beside() -> None:
        await gate.wait()
        await anyio.sleep(0.01)
        finished.set()

    with capture_logs() as logs:
        async with BackgroundRunner(limit=4) as runner:
            await runner.submit(refused)
            await runner.submit(beside)
            gate.set()
            await runner.wait()
    assert finished.is_set()
    stopped = [entry for entry in logs if entry["event"] == "background_job_stopped_by_erase"]
    assert [entry["log_level"] for entry in stopped] == ["info"]


async def test_any_other_error_still_escapes() -> None:
    """Only the erasure refusal is taken by the runner; another error still ends its group."""

    async def broken() -> None:
        raise RuntimeError("a bug")

    async def run() -> None:
        async with BackgroundRunner(limit=2) as runner:
            await runner.submit(broken)
            await runner.wait()

    with pytest.raises(BaseExceptionGroup):
        await run()
