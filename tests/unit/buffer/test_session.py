"""Sessions: one buffer per (agent, user, session), saved, reloaded, isolated and linked."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from prefrontal.buffer import (
    BufferConfig,
    BufferEvent,
    EventKind,
    Focus,
    ItemProvenance,
    ItemSource,
    Relationship,
    SessionBuffer,
)
from prefrontal.buffer.events import Subscriber
from prefrontal.errors import ConflictError, WorkingMemoryError
from prefrontal.stores.memory import InMemoryWorkingMemoryStore
from prefrontal.stores.working_memory import SessionKey, SessionState

from .conftest import Clock, at, item, words

pytestmark = pytest.mark.anyio
CONFIG = BufferConfig(base_threshold=0.0)
FOCUS = Focus(input_text="vacation")


def key(session: str = "s1", user: str = "alice", agent: str = "agent") -> SessionKey:
    return SessionKey(agent_id=agent, user_id=user, session_id=session)


async def open_session(
    store: InMemoryWorkingMemoryStore,
    k: SessionKey,
    *,
    config: BufferConfig = CONFIG,
    subscribers: Sequence[Subscriber] = (),
    max_attempts: int = 3,
) -> SessionBuffer:
    return await SessionBuffer.load(
        store,
        k,
        config=config,
        count_tokens=words,
        clock=Clock(),
        subscribers=subscribers,
        max_attempts=max_attempts,
    )


async def test_a_new_session_starts_empty_and_announces_itself() -> None:
    """Loading an unknown session gives an empty buffer and a session_started event."""
    events: list[BufferEvent] = []
    session = await open_session(InMemoryWorkingMemoryStore(), key(), subscribers=[events.append])
    assert session.is_new
    assert session.items == ()
    assert [e.kind for e in events] == [EventKind.SESSION_STARTED]


async def test_the_buffer_survives_across_turns_and_restarts() -> None:
    """A saved buffer loads back equal, in a new SessionBuffer (a restarted worker)."""
    store = InMemoryWorkingMemoryStore()
    first = await open_session(store, key())
    await first.refresh_turn([item("Lisbon trip", tags=("vacation",))], focus=FOCUS, now=at(0))
    await first.add(item("tool: flights cost 420 EUR", item_id="tool"), now=at(1))
    saved = await first.save(now=at(2))
    assert saved.version == 1
    assert saved.themes == first.themes
    again = await open_session(store, key())
    assert not again.is_new
    assert again.snapshot() == first.snapshot()
    assert again.version == 1


async def test_sessions_and_users_never_see_each_others_items() -> None:
    """Another session, another user, another agent: each loads only its own buffer."""
    store = InMemoryWorkingMemoryStore()
    keys = [key("s1"), key("s2"), key("s1", user="bob"), key("s1", agent="other")]
    for n, k in enumerate(keys):
        session = await open_session(store, k)
        await session.add(item(f"secret of owner {n}", item_id=f"x{n}"), now=at(0))
        await session.save(now=at(0))
    for n, k in enumerate(keys):
        session = await open_session(store, k)
        assert [i.item_id for i in session.items] == [f"x{n}"]


async def test_a_lost_race_reloads_replays_and_saves() -> None:
    """When another worker saved first, the turn's operations are replayed on its state."""
    store = InMemoryWorkingMemoryStore()
    mine = await open_session(store, key())
    theirs = await open_session(store, key())
    await theirs.add(item("their note", item_id="theirs"), now=at(0))
    await theirs.save(now=at(0))
    await mine.add(item("my note", item_id="mine"), now=at(1))
    saved = await mine.save(now=at(2))
    assert saved.version == 2
    assert {i.item_id for i in mine.items} == {"theirs", "mine"}
    reloaded = await open_session(store, key())
    assert {i.item_id for i in reloaded.items} == {"theirs", "mine"}


async def test_conflicts_beyond_the_attempts_are_raised() -> None:
    """A session that keeps changing under the save raises ConflictError after max_attempts."""

    class Contended(InMemoryWorkingMemoryStore):
        async def save(self, state: SessionState) -> SessionState:
            raise ConflictError("always behind", store="working_memory")

    session = await open_session(Contended(), key(), max_attempts=2)
    await session.add(item("note"), now=at(0))
    with pytest.raises(ConflictError):
        await session.save(now=at(1))


async def test_an_unreadable_saved_state_starts_over() -> None:
    """A corrupt saved state gives a fresh buffer, and the next save replaces it."""
    store = InMemoryWorkingMemoryStore()
    await store.save(SessionState(key=key(), state={"items": "garbage"}))
    session = await open_session(store, key())
    assert session.items == ()
    await session.add(item("fresh"), now=at(0))
    assert (await session.save(now=at(0))).version == 2


async def test_a_smaller_configured_bound_applies_at_load() -> None:
    """Loading with smaller bounds evicts what no longer fits, and says so (copies of
    long-term memory: notes awaiting promotion never leave for it)."""
    store = InMemoryWorkingMemoryStore()
    session = await open_session(store, key())
    for n in range(3):
        copy = item(
            f"copy {n}",
            item_id=f"c{n}",
            source=ItemSource.MEMORY_RETRIEVAL,
            provenance=ItemProvenance(store="episodic", item_ids=(f"m{n}",)),
        )
        await session.add(copy, now=at(n))
    await session.save(now=at(3))
    smaller = CONFIG.model_copy(update={"max_items": 1})
    again = await open_session(store, key(), config=smaller)
    assert len(again.items) == 1
    assert len(again.reconfigured) == 2


async def test_ending_a_session_announces_and_saves() -> None:
    """end() publishes session_ended and saves the buffer."""
    events: list[BufferEvent] = []
    store = InMemoryWorkingMemoryStore()
    session = await open_session(store, key(), subscribers=[events.append])
    state = await session.end(now=at(0))
    assert events[-1].kind is EventKind.SESSION_ENDED
    assert state.version == 1


async def _saved_session(
    store: InMemoryWorkingMemoryStore, k: SessionKey, tags: tuple[str, ...], when: float
) -> SessionBuffer:
    session = await open_session(store, k)
    fragments = [
        item(f"{t} notes {n}", tags=tags, entities=("Lisbon",)) for n, t in enumerate(tags)
    ]
    await session.refresh_turn(fragments, focus=FOCUS, now=at(when))
    await session.save(now=at(when))
    return session


async def test_recent_sessions_sharing_themes_are_linked() -> None:
    """A recent session of the same user about the same things is a continuation."""
    store = InMemoryWorkingMemoryStore()
    await _saved_session(store, key("earlier"), ("vacation", "flights"), when=0)
    await _saved_session(store, key("other-user", user="bob"), ("vacation", "flights"), when=0)
    current = await _saved_session(store, key("today"), ("vacation", "flights"), when=600)
    links = await current.links(now=at(600))
    assert [link.session_id for link in links] == ["earlier"]
    assert links[0].relationship is Relationship.CONTINUATION
    assert "lisbon" in links[0].shared_entities


async def test_sessions_outside_the_look_back_window_are_not_linked() -> None:
    """A session last updated more than 24 hours before ``now`` is not linked (the saved clock)."""
    store = InMemoryWorkingMemoryStore()
    await _saved_session(store, key("old"), ("vacation",), when=0)
    current = await _saved_session(store, key("now"), ("vacation",), when=0)
    assert [link.session_id for link in await current.links(now=at(23 * 3_600))] == ["old"]
    assert await current.links(now=at(25 * 3_600)) == ()


async def test_a_failed_operation_is_not_replayed() -> None:
    """An operation that raised is not in the journal, so a conflict replay does not raise."""
    store = InMemoryWorkingMemoryStore()
    mine = await open_session(store, key())
    theirs = await open_session(store, key())
    await theirs.save(now=at(0))
    with pytest.raises(WorkingMemoryError):
        await mine.pin("no-such-item")
    await mine.add(item("note", item_id="n"), now=at(1))
    assert (await mine.save(now=at(2))).version == 2
