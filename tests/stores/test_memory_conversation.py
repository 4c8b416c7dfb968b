"""The in-memory conversation store reads recent turns from each agent's timelines.

The timelines (every session's, and each session's read) are kept in order
by every append (and sorted again after a delete or an erase), so a new,
replaced or erased turn is seen by the next read, in the same order and with
the same tenancy as a scan of every turn would give.
"""

from __future__ import annotations

from datetime import timedelta
from itertools import count

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.stores.conversation import ConversationTurn, Role
from prefrontal.stores.memory import InMemoryConversationStore
from prefrontal.stores.tenancy import Scope, Tenant
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
MAYA = Tenant(agent_id="atlas", user_id="maya")


def said(item_id: str, minutes: int, **fields: object) -> ConversationTurn:
    """A message of maya's to atlas in session ``s``, ``minutes`` after the fixed instant."""
    return ConversationTurn.model_validate(
        {
            "item_id": item_id,
            "agent_id": "atlas",
            "user_id": "maya",
            "session_id": "s",
            "role": Role.USER,
            "content": f"message {item_id}",
            "created_at": FIXED_NOW + timedelta(minutes=minutes),
            **fields,
        }
    )


async def ids(
    store: InMemoryConversationStore, tenant: Tenant = MAYA, **query: object
) -> list[str]:
    limit = query.pop("limit", 10)
    assert isinstance(limit, int)
    session = query.pop("session_id", None)
    assert session is None or isinstance(session, str)
    return [t.item_id for t in await store.recent(tenant, limit=limit, session_id=session)]


async def test_recent_turns_are_the_newest_oldest_first_ties_in_insertion_order() -> None:
    """The newest ``limit`` turns by when they were said; equal times keep insertion order."""
    store = InMemoryConversationStore()
    for item_id, minutes in (("b", 2), ("a", 1), ("c", 2), ("d", 3)):
        await store.append(said(item_id, minutes))
    assert await ids(store) == ["a", "b", "c", "d"]
    assert await ids(store, limit=2) == ["c", "d"]
    assert await ids(store, limit=0) == []


async def test_writes_are_seen_by_the_next_read() -> None:
    """A new turn, a turn replaced with another time, and an erasure each show at once."""
    store = InMemoryConversationStore()
    await store.append(said("a", 1))
    await store.append(said("b", 2))
    assert await ids(store) == ["a", "b"]
    await store.append(said("c", 3))
    await store.append(said("a", 4))
    assert await ids(store) == ["b", "c", "a"]
    await store.erase(MAYA)
    assert await ids(store) == []


async def test_appends_after_a_read_keep_the_order_a_fresh_sort_gives() -> None:
    """Turns appended out of order, at equal times and replaced after a read are
    recent in the order a store that sorts every turn afresh gives."""
    kept, fresh = InMemoryConversationStore(), InMemoryConversationStore()
    writes = [("a", 5), ("b", 1), ("c", 5), ("d", 3), ("b", 7), ("e", 0), ("c", 2), ("f", 5)]
    first: dict[str, int] = {}
    latest: dict[str, int] = {}
    for item_id, minutes in writes:
        await kept.append(said(item_id, minutes))
        first.setdefault(item_id, len(first))
        latest[item_id] = minutes
        expected = sorted(latest, key=lambda i: (latest[i], first[i]))
        assert await ids(kept, limit=20) == expected  # read between writes: kept in place
        await fresh.append(said(item_id, minutes))
    assert await ids(kept, limit=20) == await ids(fresh, limit=20)
    assert await ids(kept, limit=20) == ["e", "c", "d", "a", "f", "b"]


async def test_a_tenant_sees_its_own_and_shared_turns_of_its_agent_only() -> None:
    """Another user's private turns and another agent's turns are never recent for a tenant."""
    store = InMemoryConversationStore()
    await store.append(said("mine", 1))
    await store.append(said("bobs", 2, user_id="bob"))
    await store.append(said("shared", 3, user_id="bob", scope=Scope.SHARED))
    await store.append(said("other-agent", 4, agent_id="other"))
    await store.append(said("elsewhere", 5, session_id="t"))
    assert await ids(store) == ["mine", "shared", "elsewhere"]
    assert await ids(store, limit=2) == ["shared", "elsewhere"]
    assert await ids(store, session_id="s") == ["mine", "shared"]
    assert await ids(store, Tenant(agent_id="atlas", user_id="bob")) == ["bobs", "shared"]
    assert await ids(store, Tenant(agent_id="other", user_id="maya")) == ["other-agent"]


Write = tuple[str, str, int, str, str]
"""An operation: ``("append", item id, minutes, session, user)`` or ``("delete", item id,
0, "", user)`` or ``("read", "", limit, session or "", user)``."""
WRITES = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"),
            st.sampled_from("abcdefgh"),
            st.integers(0, 6),
            st.sampled_from(("s", "t", "u")),
            st.sampled_from(("maya", "bob")),
        ),
        st.tuples(
            st.just("delete"),
            st.sampled_from("abcdefgh"),
            st.just(0),
            st.just(""),
            st.sampled_from(("maya", "bob")),
        ),
        st.tuples(
            st.just("read"),
            st.just(""),
            st.integers(0, 5),
            st.sampled_from(("", "s", "t", "u")),
            st.sampled_from(("maya", "bob")),
        ),
    ),
    max_size=40,
)


@settings(max_examples=120, deadline=None)
@given(WRITES)
def test_recent_is_a_scan_of_every_turn_whatever_the_writes_and_reads(
    operations: list[Write],
) -> None:
    """Appends (new, replaced, moved to another session), deletes and reads of the whole
    agent or one session, in any order: each read gives what a scan of every turn held gives
    (the newest ``limit`` visible ones by when said, then first insertion, oldest first)."""

    async def check() -> None:
        store = InMemoryConversationStore()
        held: dict[tuple[str, str], ConversationTurn] = {}
        first: dict[tuple[str, str], int] = {}  # each held turn's first insertion, in order
        sequence = count()
        for kind, item_id, number, session, user in operations:
            tenant = Tenant(agent_id="atlas", user_id=user)
            if kind == "append":
                turn = said(item_id, number, session_id=session, user_id=user)
                await store.append(turn)
                held[(user, item_id)] = turn
                first.setdefault((user, item_id), next(sequence))
            elif kind == "delete":
                await store.delete(tenant, [item_id])
                if held.pop((user, item_id), None) is not None:
                    del first[(user, item_id)]
            else:
                scan = sorted(
                    (
                        key
                        for key, turn in held.items()
                        if key[0] == user and session in ("", turn.session_id)
                    ),
                    key=lambda key: (held[key].created_at, first[key]),
                )
                expected = [held[key].item_id for key in scan][max(len(scan) - number, 0) :]
                found = await ids(store, tenant, limit=number, session_id=session or None)
                assert found == (expected if number > 0 else [])

    anyio.run(check)
