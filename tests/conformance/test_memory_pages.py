"""``MemoryAPI.list`` and ``history`` on every backend: in memory, SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import pytest

from prefrontal.errors import NotFoundError
from prefrontal.memory.api import MemoryAPI
from prefrontal.memory.listing import decode_cursor, encode_cursor
from prefrontal.stores import Stores
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.tenancy import Scope, Tenant
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio

ALICE = Tenant(agent_id="agent", user_id="alice")
BOB = Tenant(agent_id="agent", user_id="bob")
OTHER_AGENT = Tenant(agent_id="other", user_id="alice")


class Clock:
    """A clock the test moves: a minute per tick."""

    def __init__(self) -> None:
        self.now = FIXED_NOW

    def __call__(self) -> datetime:
        return self.now

    def tick(self) -> None:
        self.now += timedelta(minutes=1)


def api(stores: Stores, clock: Clock | None = None) -> MemoryAPI:
    counter = itertools.count(1)
    return MemoryAPI(stores, clock=clock or Clock(), ids=lambda: f"m-{next(counter):05d}")


async def test_pages_cover_every_visible_memory_once_newest_first(stores: Stores) -> None:
    """Paging by cursor returns each visible memory once, newest id first, across both stores."""
    memories = api(stores)
    for n in range(23):
        await memories.remember(
            ALICE, f"fact {n}", store="semantic" if n % 3 else "episodic", kind=MemoryKind.FACT
        )
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await memories.list(ALICE, limit=5, after=cursor)
        pages += 1
        seen += [listed.item.item_id for listed in page.memories]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 5
    assert seen == [f"m-{n:05d}" for n in range(23, 0, -1)]
    stores_seen = {listed.store for listed in (await memories.list(ALICE, limit=30)).memories}
    assert stores_seen == {"semantic", "episodic"}


async def test_one_id_in_both_stores_is_listed_from_each_once(stores: Stores) -> None:
    """An id held in both stores is listed twice (one per store), never dropped at a page edge."""
    memories = api(stores)
    await memories.remember(ALICE, "in semantic", item_id="same", store="semantic")
    await memories.remember(ALICE, "in episodic", item_id="same", store="episodic")
    first = await memories.list(ALICE, limit=1)
    second = await memories.list(ALICE, limit=1, after=first.next_cursor)
    assert [m.store for m in (*first.memories, *second.memories)] == ["semantic", "episodic"]
    assert second.next_cursor is None


async def test_list_shows_own_and_shared_never_another_users_private(stores: Stores) -> None:
    """A user lists its own memories and others' shared ones, never another user's or agent's."""
    memories = api(stores)
    await memories.remember(ALICE, "alice private")
    await memories.remember(BOB, "bob private")
    await memories.remember(BOB, "bob shared", scope=Scope.SHARED)
    await memories.remember(OTHER_AGENT, "other agent's")
    listed = await memories.list(ALICE)
    assert sorted(m.item.content for m in listed.memories) == ["alice private", "bob shared"]
    shared = await memories.list(ALICE, scope=Scope.SHARED)
    assert [m.item.content for m in shared.memories] == ["bob shared"]


async def test_list_filters_by_kind_and_store(stores: Stores) -> None:
    """Kinds and store narrow the list, and paging keeps the filters."""
    memories = api(stores)
    await memories.remember(ALICE, "a fact", kind=MemoryKind.FACT)
    await memories.remember(ALICE, "a skill", kind=MemoryKind.SKILL)
    await memories.remember(ALICE, "an event", kind=MemoryKind.EVENT, store="episodic")
    skills = await memories.list(ALICE, kinds=[MemoryKind.SKILL])
    assert [m.item.content for m in skills.memories] == ["a skill"]
    episodic = await memories.list(ALICE, store="episodic")
    assert [m.item.content for m in episodic.memories] == ["an event"]


async def test_a_bad_cursor_or_limit_is_refused(stores: Stores) -> None:
    """A cursor no page made, or a limit out of range, is a ValueError that names it."""
    memories = api(stores)
    with pytest.raises(ValueError, match="cursor"):
        await memories.list(ALICE, after="not a cursor!")
    with pytest.raises(ValueError, match="limit"):
        await memories.list(ALICE, limit=0)


def test_cursor_round_trips() -> None:
    """A cursor decodes to the position and store it was made from; any of its form decodes."""
    assert decode_cursor(encode_cursor(("m-1", "alicé"), "episodic")) == (
        ("m-1", "alicé"),
        "episodic",
    )
    assert decode_cursor("sff00.") == (("\ufffd\ufffd", ""), "semantic")


async def test_history_names_each_version_its_author_time_and_change(stores: Stores) -> None:
    """Each update keeps the version it replaced: what changed, who wrote it, and when."""
    clock = Clock()
    memories = api(stores, clock)
    item = await memories.remember(ALICE, "likes tea", author="key-a")
    clock.tick()
    await memories.update(ALICE, item.item_id, content="likes green tea", author="key-b")
    clock.tick()
    await memories.update(ALICE, item.item_id, importance=0.9, author="key-b")
    await memories.recall(ALICE, "tea")  # a recall changes counts in place: no version
    history = await memories.history(ALICE, item.item_id)
    assert [v.content for v in history] == ["likes tea", "likes green tea", "likes green tea"]
    assert [v.author for v in history] == ["key-a", "key-b", "key-b"]
    assert [v.at for v in history] == [
        FIXED_NOW,
        FIXED_NOW + timedelta(minutes=1),
        FIXED_NOW + timedelta(minutes=2),
    ]
    assert [v.changed for v in history] == [(), ("content", "author"), ("importance",)]
    assert [v.current for v in history] == [False, False, True]


async def test_history_of_a_shared_memory_hides_its_private_versions(stores: Stores) -> None:
    """Another user sees a shared memory's shared versions, never one that was private."""
    memories = api(stores)
    await memories.remember(BOB, "draft", item_id="note")
    await memories.remember(BOB, "published", item_id="note", scope=Scope.SHARED)
    assert [v.content for v in await memories.history(BOB, "note")] == ["draft", "published"]
    assert [v.content for v in await memories.history(ALICE, "note")] == ["published"]


async def test_history_of_another_users_private_memory_is_not_found(stores: Stores) -> None:
    """A memory the tenant cannot see has no history for it: NotFoundError."""
    memories = api(stores)
    await memories.remember(BOB, "bob private", item_id="secret")
    with pytest.raises(NotFoundError):
        await memories.history(ALICE, "secret")


async def test_forget_and_erase_remove_the_versions(stores: Stores) -> None:
    """Forgetting a memory or erasing its user leaves none of its versions behind."""
    memories = api(stores)
    await memories.remember(ALICE, "first words", item_id="kept")
    await memories.update(ALICE, "kept", content="second words")
    await memories.forget(ALICE, "kept")
    await memories.remember(ALICE, "again", item_id="kept")
    assert [v.content for v in await memories.history(ALICE, "kept")] == ["again"]
    await memories.update(ALICE, "kept", content="and again")
    await memories.erase(ALICE.agent_id, ALICE.user_id)
    await memories.readmit(ALICE.agent_id, ALICE.user_id)
    await memories.remember(ALICE, "after the erase", item_id="kept")
    assert [v.content for v in await memories.history(ALICE, "kept")] == ["after the erase"]
