"""The public test doubles behave as documented."""

from __future__ import annotations

import anyio
import pytest

from prefrontal.errors import StoreError
from prefrontal.stores import AgentProfile, Tenant
from prefrontal.stores.memory import InMemoryConsciousnessStore
from prefrontal.testing import DelayedStore, FailingStore

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="a", user_id="u")


async def test_delayed_store_answers_after_its_delay() -> None:
    """A DelayedStore forwards the call and its result after sleeping."""
    inner = InMemoryConsciousnessStore()
    await inner.put_profile(AgentProfile(agent_id="a", name="Ada"))
    store = DelayedStore(inner, 0.02)
    started = anyio.current_time()
    profile = await store.get_profile(TENANT)
    assert profile is not None and profile.name == "Ada"
    assert anyio.current_time() - started >= 0.02
    assert store.calls == 1


async def test_failing_store_fails_then_recovers_when_limited() -> None:
    """With ``times=1`` the first call raises the given error and the second reaches the store."""
    store = FailingStore(InMemoryConsciousnessStore(), StoreError("boom"), times=1)
    with pytest.raises(StoreError, match="boom"):
        await store.get_profile(TENANT)
    assert await store.get_profile(TENANT) is None


def test_delay_must_not_be_negative() -> None:
    """A negative delay is refused."""
    with pytest.raises(ValueError, match="seconds"):
        DelayedStore(InMemoryConsciousnessStore(), -1)
