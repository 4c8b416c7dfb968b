"""Consolidation on every backend: due items grouped by source, promoted with provenance, released."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from prefrontal.buffer import (
    BufferConfig,
    BufferItem,
    ItemProvenance,
    ItemSource,
    Lifetime,
    NewItem,
    OverflowPolicy,
    SessionBuffer,
)
from prefrontal.formation import consolidate, open_session, originals, promoted_id
from prefrontal.stores import (
    MemoryKind,
    SessionKey,
    SessionState,
    Stores,
    Tenant,
    WorkingMemoryStore,
)

pytestmark = pytest.mark.anyio

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
KEY = SessionKey(agent_id="assistant", user_id="ada", session_id="s-1")
CONFIG = BufferConfig(max_items=16, max_tokens=400, base_threshold=0.0)


def words(text: str) -> int:
    return len(text.split())


def note(item_id: str, content: str, source: ItemSource, **fields: object) -> NewItem:
    return NewItem.model_validate(
        {"item_id": item_id, "content": content, "source": source, "tokens": words(content)}
        | fields
    )


async def seeded(stores: Stores) -> SessionBuffer:
    """A saved session: old notes of three sources, a fresh one, a pinned one, a turn fragment."""
    session = await SessionBuffer.load(
        stores.working_memory, KEY, config=CONFIG, count_tokens=words, clock=lambda: T0
    )
    old = [
        note("tool-1", "Flights to Lisbon cost 420 EUR. Cheapest on Tuesday.", ItemSource.EXTERNAL),
        note("user-1", "Ada prefers window seats.", ItemSource.USER_INPUT, tags=("travel",)),
        note("tool-2", "The hotel has a free room on May 3.", ItemSource.EXTERNAL),
        note("refl-1", "Ada seems to travel for work.", ItemSource.REFLECTION, priority=0.8),
        note("pin-1", "Ada's passport expires in June.", ItemSource.USER_INPUT, pinned=True),
        note(
            "frag-1",
            "Retrieved: Ada visited Porto last year.",
            ItemSource.MEMORY_RETRIEVAL,
            lifetime=Lifetime.TURN,
            provenance=ItemProvenance(store="episodic", item_ids=("ep-9",)),
        ),
    ]
    for new in old:
        await session.add(new, now=T0)
    await session.add(
        note("tool-3", "Weather in Lisbon: sunny.", ItemSource.EXTERNAL),
        now=T0 + timedelta(seconds=200),
    )
    await session.save(T0 + timedelta(seconds=200))
    return session


async def held(stores: Stores) -> dict[str, BufferItem]:
    session = await SessionBuffer.load(stores.working_memory, KEY, count_tokens=words)
    return {item.item_id: item for item in session.items}


async def promoted(stores: Stores, ids: Sequence[str]) -> dict[str, object]:
    items = await stores.episodic.get(KEY.tenant, list(ids))
    return {item.item_id: item for item in items}


async def test_due_items_are_grouped_by_source_and_promoted_with_provenance(stores: Stores) -> None:
    """Items untouched for half their lifetime become one episodic summary per source, naming them."""
    await seeded(stores)
    report = await consolidate(stores, KEY, now=T0 + timedelta(seconds=240), count_tokens=words)
    groups = {p.source: p.originals for p in report.promoted}
    assert groups == {
        ItemSource.EXTERNAL: ("tool-1", "tool-2"),
        ItemSource.USER_INPUT: ("user-1",),
        ItemSource.REFLECTION: ("refl-1",),
    }
    assert all(p.written and not p.resumed for p in report.promoted)
    items = await stores.episodic.get(KEY.tenant, list(report.promoted_ids))
    assert len(items) == 3
    for item in items:
        assert item.kind is MemoryKind.SUMMARY
        assert item.item_id == promoted_id(KEY, originals(item))
        assert item.metadata["session_id"] == "s-1"
        assert item.created_at == T0 + timedelta(seconds=240)
        assert item.occurred_at == T0
        assert "consolidated" in item.tags
    external = next(i for i in items if i.metadata["source"] == "external")
    assert json.loads(str(external.metadata["consolidated_from"])) == ["tool-1", "tool-2"]
    assert "Flights to Lisbon cost 420 EUR." in external.content
    assert "The hotel has a free room on May 3." in external.content
    assert "Cheapest on Tuesday" not in external.content


async def test_promoted_items_leave_the_buffer_and_nothing_else_changes(stores: Stores) -> None:
    """The promoted originals leave the buffer; the fresh, pinned and fragment items stay unchanged."""
    await seeded(stores)
    before = await held(stores)
    report = await consolidate(stores, KEY, now=T0 + timedelta(seconds=240), count_tokens=words)
    after = await held(stores)
    assert sorted(report.released) == ["refl-1", "tool-1", "tool-2", "user-1"]
    assert set(after) == {"pin-1", "frag-1", "tool-3"}
    assert all(after[i] == before[i] for i in after)
    assert report.kept == 3
    state = await stores.working_memory.load(KEY)
    assert state is not None and state.version == 3


async def test_nothing_is_due_before_half_the_lifetime(stores: Stores) -> None:
    """At 149 s of a 300 s fade-out nothing is due: no write, no save."""
    await seeded(stores)
    report = await consolidate(stores, KEY, now=T0 + timedelta(seconds=149), count_tokens=words)
    assert report.promoted == () and report.released == () and report.kept == 7
    state = await stores.working_memory.load(KEY)
    assert state is not None and state.version == 1
    assert len(await held(stores)) == 7


async def test_a_given_lifetime_replaces_the_fade_out_time(stores: Stores) -> None:
    """With a one-hour lifetime, items idle 20 minutes are not due; all are at 34 minutes."""
    await seeded(stores)
    hour = timedelta(hours=1)
    early = await consolidate(stores, KEY, now=T0 + timedelta(minutes=20), lifetime=hour)
    assert early.promoted == ()
    late = await consolidate(stores, KEY, now=T0 + timedelta(minutes=34), lifetime=hour)
    assert {o for p in late.promoted for o in p.originals} == {
        "tool-1",
        "tool-2",
        "tool-3",
        "user-1",
        "refl-1",
    }


async def test_a_second_run_does_nothing_more(stores: Stores) -> None:
    """Consolidation is idempotent: run again at the same moment, it promotes and removes nothing."""
    await seeded(stores)
    first = await consolidate(stores, KEY, now=T0 + timedelta(seconds=240), count_tokens=words)
    second = await consolidate(stores, KEY, now=T0 + timedelta(seconds=240), count_tokens=words)
    assert first.promoted and second.promoted == () and second.released == ()
    assert len(await promoted(stores, first.promoted_ids)) == 3


async def test_a_session_never_saved_is_left_alone(stores: Stores) -> None:
    """An unknown session gives an empty report and creates nothing."""
    report = await consolidate(stores, KEY, now=T0)
    assert report.promoted == () and report.kept == 0
    assert await stores.working_memory.load(KEY) is None


async def test_another_user_sees_nothing_promoted(stores: Stores) -> None:
    """Promoted items are private to the session's user."""
    await seeded(stores)
    report = await consolidate(stores, KEY, now=T0 + timedelta(seconds=240), count_tokens=words)
    other = Tenant(agent_id="assistant", user_id="bob")
    assert await stores.episodic.get(other, list(report.promoted_ids)) == []


async def test_any_async_callable_summarizes(stores: Stores) -> None:
    """A custom summarizer writes each group's content; blank output falls back to extractive."""
    await seeded(stores)

    async def shouting(items: Sequence[BufferItem], max_tokens: int, count_tokens: object) -> str:
        if items[0].source is ItemSource.REFLECTION:
            return "   "
        return " | ".join(i.content.upper() for i in items)

    report = await consolidate(
        stores, KEY, now=T0 + timedelta(seconds=240), summarizer=shouting, count_tokens=words
    )
    items = {
        i.metadata["source"]: i
        for i in await stores.episodic.get(KEY.tenant, list(report.promoted_ids))
    }
    assert items["external"].content.startswith("FLIGHTS TO LISBON")
    assert items["reflection"].content == "- Ada seems to travel for work."


async def test_a_buffer_summary_is_promoted_with_what_it_folded(stores: Stores) -> None:
    """A SUMMARIZE buffer's summary is promoted like any item, naming the items folded into it;
    each note folded into it was promoted on its own as it was folded."""
    config = BufferConfig(
        max_items=3,
        max_tokens=400,
        base_threshold=0.0,
        policy=OverflowPolicy.SUMMARIZE,
        summary_min_tokens=3,
    )
    session = await open_session(stores, KEY, config=config, count_tokens=words, clock=lambda: T0)
    for n in range(5):
        await session.add(note(f"n{n}", f"Note {n} is here. More.", ItemSource.EXTERNAL), now=T0)
    await session.save(T0)
    [summary] = [i for i in session.items if i.is_summary]
    report = await consolidate(stores, KEY, now=T0 + timedelta(seconds=200), count_tokens=words)
    assert report.kept == 0
    items = await stores.episodic.get(KEY.tenant, list(report.promoted_ids))
    assert sorted(i.metadata["source"] for i in items) == ["external", "system"]
    [item] = [i for i in items if i.metadata["source"] == "system"]
    assert originals(item) == (summary.item_id,)
    assert set(json.loads(str(item.metadata["folded_from"]))) == set(summary.summary_of)
    folded = await stores.episodic.get(
        KEY.tenant, [promoted_id(KEY, (n,)) for n in summary.summary_of]
    )
    assert [originals(i) for i in folded] == [(n,) for n in summary.summary_of]


class RacingStore:
    """A working-memory store where a turn saves the session just before chosen saves."""

    def __init__(self, inner: WorkingMemoryStore, racing_saves: set[int]) -> None:
        self.inner = inner
        self.racing_saves = racing_saves
        self.saves = 0

    async def load(self, key: SessionKey) -> SessionState | None:
        return await self.inner.load(key)

    async def save(self, state: SessionState) -> SessionState:
        self.saves += 1
        if self.saves in self.racing_saves:
            turn = await SessionBuffer.load(self.inner, KEY, count_tokens=words)
            content = f"Arrived during save {self.saves}."
            await turn.add(note(f"race-{self.saves}", content, ItemSource.REFLECTION), now=T0)
            await turn.save(T0 + timedelta(seconds=230))
        return await self.inner.save(state)

    async def recent_sessions(
        self, tenant: Tenant, *, since: datetime, limit: int
    ) -> list[SessionState]:
        return await self.inner.recent_sessions(tenant, since=since, limit=limit)


@pytest.mark.parametrize("racing", [{1}, {2}, {1, 2, 3}])
async def test_a_turn_saving_meanwhile_loses_nothing(stores: Stores, racing: set[int]) -> None:
    """A turn that saves between consolidation's load and save keeps its item; the job completes."""
    await seeded(stores)
    racer = RacingStore(stores.working_memory, racing)
    report = await consolidate(
        stores.replace(working_memory=racer),
        KEY,
        now=T0 + timedelta(seconds=240),
        count_tokens=words,
    )
    after = await held(stores)
    raced = {f"race-{n}" for n in racing}
    promoted_originals = {o for p in report.promoted for o in p.originals}
    assert raced <= set(after) | promoted_originals
    assert {"tool-1", "tool-2", "user-1", "refl-1"} <= promoted_originals
    assert not promoted_originals & set(after)
    assert not any(item.consolidating_into for item in after.values())
    assert len(await promoted(stores, report.promoted_ids)) == len(report.promoted)
