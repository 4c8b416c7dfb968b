"""The readiness gate: free while the stores answer; one check a second while they do not."""

from __future__ import annotations

import pytest

from prefrontal.errors import TransientStoreError
from prefrontal.serving.readiness import Readiness, StoresUnavailableError

pytestmark = pytest.mark.anyio


class Stores:
    """A check that fails while ``down``, counting its calls."""

    def __init__(self) -> None:
        self.down = False
        self.checks = 0

    async def check(self) -> None:
        self.checks += 1
        if self.down:
            raise TransientStoreError("postgres: connection refused", store="consciousness")


async def test_the_gate_costs_no_check_while_the_stores_answer() -> None:
    stores = Stores()
    readiness = Readiness(stores.check, clock=lambda: 0.0)
    assert await readiness.check() is None
    for _ in range(5):
        await readiness.gate()
    assert stores.checks == 1
    assert readiness.available


async def test_refused_calls_check_again_once_a_recheck_period_until_the_stores_answer() -> None:
    stores, now = Stores(), [100.0]
    readiness = Readiness(stores.check, recheck_s=1.0, clock=lambda: now[0])
    stores.down = True
    assert await readiness.check() == "postgres: connection refused"
    for _ in range(3):
        with pytest.raises(StoresUnavailableError) as refused:
            await readiness.gate()
    assert stores.checks == 1  # a burst of calls within the second: no new check
    assert refused.value.retry_after_s == 1.0
    assert "connection refused" in str(refused.value)
    now[0] += 1.0
    stores.down = False
    await readiness.gate()  # checked again, answered: let through
    assert stores.checks == 2
    assert readiness.available
