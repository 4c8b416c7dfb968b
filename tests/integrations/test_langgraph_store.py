"""``PrefrontalStore`` beyond LangGraph's suite: TTL on the store's clock, tenancy, and turns that recall it."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

pytest.importorskip("langgraph")

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.integrations.langgraph import PrefrontalStore
from prefrontal.stores import Tenant
from prefrontal.stores.long_term import MemoryKind, MemoryQuery
from tests.conftest import FIXED_NOW, counting_ids

pytestmark = pytest.mark.anyio


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = FIXED_NOW

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


async def test_an_item_expires_after_its_ttl() -> None:
    clock = Clock()
    store = PrefrontalStore(Stores.in_memory(), agent_id="a", user_id="u", clock=clock)
    await store.aput(("notes",), "k", {"text": "parking on level 3"}, ttl=1)
    await store.aput(("notes",), "kept", {"text": "parking pass renewed"})
    assert await store.aget(("notes",), "k") is not None
    clock.advance(2)
    assert await store.aget(("notes",), "k") is None
    assert [i.key for i in await store.asearch(("notes",))] == ["kept"]
    assert [i.key for i in await store.asearch(("notes",), query="parking")] == ["kept"]


async def test_a_read_pushes_the_expiry_back_unless_told_not_to() -> None:
    """With refresh_on_read, a read pushes the expiry back; refresh_ttl=False does not."""
    clock = Clock()
    store = PrefrontalStore(
        Stores.in_memory(), agent_id="a", user_id="u", clock=clock, ttl={"refresh_on_read": True}
    )
    await store.aput(("notes",), "k", {"text": "gate code 4411"}, ttl=10)
    clock.advance(8)
    assert await store.aget(("notes",), "k") is not None  # refreshed: ten more minutes
    clock.advance(8)
    item = await store.aget(("notes",), "k", refresh_ttl=False)
    assert item is not None
    assert item.updated_at == FIXED_NOW  # a refresh is not an update
    clock.advance(3)
    assert await store.aget(("notes",), "k") is None


async def test_the_ttl_config_gives_a_default() -> None:
    """default_ttl applies to a put without its own TTL."""
    clock = Clock()
    store = PrefrontalStore(
        Stores.in_memory(), agent_id="a", user_id="u", clock=clock, ttl={"default_ttl": 5}
    )
    await store.aput(("notes",), "k", {"text": "temporary"})
    clock.advance(6)
    assert await store.aget(("notes",), "k") is None


async def test_the_user_label_keeps_each_user_to_their_own_memory() -> None:
    stores = Stores.in_memory()
    store = PrefrontalStore(stores, agent_id="atlas", user_label=1, clock=Clock())
    await store.aput(("memories", "maya"), "diet", {"text": "vegetarian"})
    await store.aput(("memories", "ana"), "diet", {"text": "vegan"})
    assert [i.value for i in await store.asearch(("memories", "maya"))] == [{"text": "vegetarian"}]
    ana = await store.asearch(("memories", "ana"), query="vegetarian")
    assert [(i.value, i.score) for i in ana] == [({"text": "vegan"}, 0.0)]
    assert await store.alist_namespaces(prefix=("memories", "ana")) == [("memories", "ana")]
    with pytest.raises(ValueError, match="names no user"):
        await store.asearch(("memories",))
    with pytest.raises(ValueError, match="names no user"):
        await store.alist_namespaces(prefix=("memories", "*"))
    maya = await stores.semantic.search(
        Tenant(agent_id="atlas", user_id="maya"),
        MemoryQuery(text="vegan vegetarian", now=FIXED_NOW + timedelta(days=1)),
    )
    assert [hit.item.content for hit in maya] == ['{"text": "vegetarian"}']


async def test_a_stored_memory_reaches_the_users_turns() -> None:
    stores = Stores.in_memory()
    store = PrefrontalStore(stores, agent_id="atlas", user_label=1, clock=Clock())
    await store.aput(("memories", "maya"), "diet", {"text": "Maya is vegetarian"})
    async with Orchestrator(stores, clock=Clock(), ids=counting_ids()) as orchestrator:
        seen = {}
        for user in ("maya", "ana"):
            result = await orchestrator.start_turn(
                TurnRequest(
                    agent_id="atlas",
                    user_id=user,
                    session_id=f"s-{user}",
                    user_input="Any vegetarian dinner ideas?",
                )
            )
            seen[user] = [m["content"] for m in result.bundle.to_messages()]
    assert any("Maya is vegetarian" in text for text in seen["maya"])
    assert not any("Maya is vegetarian" in text for text in seen["ana"])


async def test_event_kinds_are_episodic_memory() -> None:
    stores = Stores.in_memory()
    store = PrefrontalStore(stores, agent_id="a", user_id="u", kind=MemoryKind.EVENT)
    await store.aput(("log",), "1", {"text": "deployed the release"})
    tenant = Tenant(agent_id="a", user_id="u")
    assert await store.aget(("log",), "1") is not None
    assert await stores.semantic.erase(tenant) == 0
    assert await stores.episodic.erase(tenant) == 1


def test_the_tenant_is_fixed_or_read_from_the_namespace() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        PrefrontalStore(Stores.in_memory(), agent_id="a")
    with pytest.raises(ValueError, match="exactly one"):
        PrefrontalStore(Stores.in_memory(), agent_id="a", user_id="u", user_label=0)


def test_a_namespace_must_fit_prefrontals_tags() -> None:
    with PrefrontalStore(Stores.in_memory(), agent_id="a", user_id="u") as store:
        with pytest.raises(ValueError, match="at most 31 labels"):
            store.put(tuple(f"l{i}" for i in range(32)), "k", {"v": 1})
        with pytest.raises(ValueError, match="at most 256 characters"):
            store.put(("x" * 257,), "k", {"v": 1})
        assert store.run(lambda: store.aget(("a",), "k")) is None


async def test_reads_refresh_only_when_the_ttl_config_says_so() -> None:
    """Without refresh_on_read, reads leave the expiry where the put set it (as SqliteStore)."""
    clock = Clock()
    store = PrefrontalStore(
        Stores.in_memory(), agent_id="a", user_id="u", clock=clock, ttl={"default_ttl": 5}
    )
    await store.aput(("notes",), "k", {"text": "temporary"})
    clock.advance(3)
    assert await store.aget(("notes",), "k") is not None
    assert await store.asearch(("notes",), query="temporary")
    clock.advance(3)
    assert await store.aget(("notes",), "k") is None
