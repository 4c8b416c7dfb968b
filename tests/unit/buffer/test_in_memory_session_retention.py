"""The in-memory working-memory store holds a bounded number of sessions: the least recently saved go."""

from __future__ import annotations

from datetime import timedelta

import pytest

from prefrontal.stores.memory import InMemoryWorkingMemoryStore
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio


def state(session: str, version: int = 0, user: str = "ada") -> SessionState:
    key = SessionKey(agent_id="assistant", user_id=user, session_id=session)
    return SessionState(key=key, version=version, started_at=FIXED_NOW, updated_at=FIXED_NOW)


async def test_past_its_bound_the_least_recently_saved_session_goes() -> None:
    """With ``keep=2``, saving a third session forgets the one saved longest ago, not the oldest."""
    store = InMemoryWorkingMemoryStore(keep=2)
    await store.save(state("a"))
    await store.save(state("b"))
    await store.save(state("a", version=1))
    await store.save(state("c"))
    assert await store.load(state("b").key) is None
    assert (await store.load(state("a").key)) is not None
    assert (await store.load(state("c").key)) is not None


async def test_a_forgotten_session_leaves_no_trace_in_recent_sessions() -> None:
    """A session let go is gone from its owner's recent sessions too, and may start afresh."""
    store = InMemoryWorkingMemoryStore(keep=1)
    await store.save(state("a"))
    await store.save(state("b", user="grace"))
    tenant = Tenant(agent_id="assistant", user_id="ada")
    assert await store.recent_sessions(tenant, since=FIXED_NOW - timedelta(days=1), limit=5) == []
    again = await store.save(state("a"))
    assert again.version == 1


def test_a_bound_below_one_is_refused() -> None:
    """``keep=0`` would forget every session as it is saved: refused at construction."""
    with pytest.raises(ValueError, match="keep must be at least 1"):
        InMemoryWorkingMemoryStore(keep=0)
