"""Nothing the agent notes is lost: a note is promoted to episodic memory before the buffer's
policy lets it go, and kept (with a reason) when it cannot be promoted."""

from __future__ import annotations

import json
import math
from typing import cast

import pytest
from pydantic import ValidationError

from prefrontal.buffer import (
    BufferConfig,
    BufferEvent,
    EventKind,
    EvictionReason,
    ItemProvenance,
    ItemSource,
    NewItem,
    OverflowPolicy,
    SessionBuffer,
    WorkingMemoryBuffer,
)
from prefrontal.buffer.state_document import decode, encode
from prefrontal.errors import TransientStoreError, WorkingMemoryError
from prefrontal.formation import consolidate, episodic_keeper, open_session, originals, promoted_id
from prefrontal.stores import MemoryItem, MemoryStore, SessionKey, Stores

from .conftest import at, words

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id="agent", user_id="ada", session_id="s-1")


class Outage:
    """The episodic store, but its writes fail while ``down`` (a store that went away)."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner
        self.down = True

    async def put_many(self, items: list[MemoryItem]) -> None:
        if self.down:
            raise TransientStoreError("episodic store unreachable")
        await self.inner.put_many(items)


def note(n: int, **fields: object) -> NewItem:
    """The agent's note ``n`` (four words)."""
    return NewItem.model_validate({"content": f"Note {n} to keep.", "item_id": f"n{n}", **fields})


def copy(name: str) -> NewItem:
    """A copy of a long-term memory: it may leave the buffer at any time, unpromoted."""
    return NewItem(
        content=f"Copy {name} of a memory.",
        item_id=name,
        source=ItemSource.MEMORY_RETRIEVAL,
        provenance=ItemProvenance(store="semantic", item_ids=(f"m-{name}",)),
    )


def kept_buffer(stores: Stores, **settings: object) -> WorkingMemoryBuffer:
    """A buffer of session ``KEY`` that promotes into ``stores.episodic``."""
    config = BufferConfig.model_validate({"base_threshold": 0.0, **settings})
    keeper = episodic_keeper(stores.episodic, KEY)
    return WorkingMemoryBuffer(config, count_tokens=words, keeper=keeper)


def down_buffer(stores: Stores, **settings: object) -> tuple[WorkingMemoryBuffer, Outage]:
    """A buffer of session ``KEY`` whose episodic store is down (until told otherwise)."""
    outage = Outage(stores.episodic)
    config = BufferConfig.model_validate({"base_threshold": 0.0, **settings})
    keeper = episodic_keeper(cast(MemoryStore, outage), KEY)
    return WorkingMemoryBuffer(config, count_tokens=words, keeper=keeper), outage


async def episodic_content(stores: Stores, item_id: str) -> str | None:
    """The content of the episodic item a note ``item_id`` was promoted to, if written."""
    found = await stores.episodic.get(KEY.tenant, [promoted_id(KEY, (item_id,))])
    return found[0].content if found else None


async def test_a_high_priority_note_without_a_focus_is_kept_under_the_defaults() -> None:
    """Default settings: a note at priority 0.9 without a focus is admitted (it scored 0.200
    against a threshold of 0.202 once anything was held)."""
    buffer = WorkingMemoryBuffer(count_tokens=words)
    await buffer.add(NewItem(content="Something held already.", priority=0.9), now=at(0))
    result = await buffer.add(
        NewItem(content="Ada's locker code is 4417.", priority=0.9), now=at(1)
    )
    assert result.outcome.value == "admitted"
    assert result.decision is not None and "high_priority" in result.decision.reasons
    low = await buffer.add(NewItem(content="A passing remark.", priority=0.3), now=at(2))
    assert low.outcome.value == "refused"


@pytest.mark.parametrize("policy", list(OverflowPolicy))
async def test_a_note_idle_past_its_fade_out_is_promoted_then_fades(
    policy: OverflowPolicy,
) -> None:
    """Ten minutes idle, a session's note leaves by time (faded, or folded under SUMMARIZE)
    after it was written to episodic memory; its event names that item; a copy of long-term
    memory leaves unpromoted."""
    stores = Stores.in_memory()
    config = BufferConfig(policy=policy, base_threshold=0.0, summary_min_tokens=2)
    session = await open_session(stores, KEY, config=config)
    await session.add(NewItem(content="Ada's locker code is 4417.", item_id="n"), now=at(0))
    await session.add(copy("c"), now=at(0))
    await session.save(at(0))
    later = await open_session(stores, KEY)
    heard: list[BufferEvent] = []
    later.buffer.events.subscribe(heard.append)
    gone = {e.item_id: e for e in await later.expire(at(600))}
    assert set(gone) == {"n", "c"}
    target = promoted_id(KEY, ("n",))
    assert gone["n"].promoted_to == target
    assert gone["c"].promoted_to is None
    reason = "summarized" if policy is OverflowPolicy.SUMMARIZE else "faded"
    [event] = [e for e in heard if e.kind is EventKind.EVICTED and e.item_id == "n"]
    assert (event.reason, event.details["promoted_to"]) == (reason, target)
    [stored] = await stores.episodic.get(KEY.tenant, [target])
    assert stored.content == "Ada's locker code is 4417."
    assert originals(stored) == ("n",)
    assert stored.metadata["session_id"] == KEY.session_id


@pytest.mark.parametrize("policy", list(OverflowPolicy))
async def test_a_note_added_to_a_full_buffer_evicts_a_note_promoted_first(
    policy: OverflowPolicy,
) -> None:
    """Three notes fill three slots: a fourth is admitted, and every note it pushes out was
    written to episodic memory first, its eviction naming the episodic item."""
    stores = Stores.in_memory()
    buffer = kept_buffer(stores, policy=policy, max_items=3, summary_min_tokens=2)
    for n in range(3):
        await buffer.add(note(n), now=at(n))
    result = await buffer.add(note(3), now=at(3))
    assert result.outcome.value == "admitted", result.reason
    assert result.evicted
    for eviction in result.evicted:
        assert eviction.promoted_to == promoted_id(KEY, (eviction.item_id,))
        assert eviction.detail.endswith(f"promoted to {eviction.promoted_to}")
        assert await episodic_content(stores, eviction.item_id) == eviction.item.content


@pytest.mark.parametrize("policy", list(OverflowPolicy))
async def test_shrinking_the_bounds_promotes_the_notes_it_evicts(policy: OverflowPolicy) -> None:
    """Two notes among three copies, bounds cut to one item: four leave by the policy, the
    notes among them promoted first."""
    stores = Stores.in_memory()
    buffer = kept_buffer(stores, policy=policy, max_items=6)
    await buffer.add(note(0), now=at(0))
    for n in range(3):
        await buffer.add(copy(f"c{n}"), now=at(1 + n))
    await buffer.add(note(1), now=at(5))
    gone = await buffer.reconfigure(buffer.config.model_copy(update={"max_items": 1}), now=at(6))
    assert len(gone) == 4 and len(buffer) == 1
    for eviction in gone:
        if eviction.item_id.startswith("n"):
            assert await episodic_content(stores, eviction.item_id) == eviction.item.content
        else:
            assert eviction.promoted_to is None


async def test_a_marked_item_fades_promoted_on_its_own() -> None:
    """A note marked by a consolidation that stopped before promoting it fades like any
    note: promoted first, under its own id."""
    stores = Stores.in_memory()
    buffer = kept_buffer(stores)
    await buffer.add(note(0), now=at(0))
    buffer.mark_consolidation({"n0": "wmc_x"}, now=at(200))
    [gone] = await buffer.expire(at(600))
    assert gone.promoted_to == promoted_id(KEY, ("n0",))
    assert await episodic_content(stores, "n0") == "Note 0 to keep."


async def test_a_session_loaded_under_smaller_bounds_adopts_them_promoting_its_notes() -> None:
    """A deployment cuts ``max_items`` below the notes a session holds: the next load adopts
    the bounds, the notes it lets go promoted first."""
    stores = Stores.in_memory()
    config = BufferConfig(max_items=4, base_threshold=0.0)
    session = await open_session(stores, KEY, config=config)
    for n in range(3):
        await session.add(note(n), now=at(n))
    await session.save(at(3))
    smaller = config.model_copy(update={"max_items": 1})
    again = await open_session(stores, KEY, config=smaller)
    assert again.deferred is None
    assert again.buffer.config == smaller
    assert len(again.reconfigured) == 2 and len(again.items) == 1
    for eviction in again.reconfigured:
        assert await episodic_content(stores, eviction.item_id) == eviction.item.content


async def test_with_the_store_down_a_newcomer_that_needs_a_note_to_leave_is_refused() -> None:
    """Long-term store down, three notes in three slots: a fourth note is refused with a
    reason naming the failed promotion, and the buffer is as it was."""
    stores = Stores.in_memory()
    buffer, outage = down_buffer(stores, max_items=3)
    for n in range(3):
        await buffer.add(note(n), now=at(n))
    before = buffer.snapshot()
    refused = await buffer.add(note(3), now=at(3))
    assert refused.outcome.value == "refused"
    assert refused.reason.startswith("no_room")
    assert "could not be promoted (TransientStoreError: episodic store unreachable)" in (
        refused.reason
    )
    assert buffer.snapshot().items == before.items
    outage.down = False
    admitted = await buffer.add(note(3), now=at(4))
    assert admitted.outcome.value == "admitted"
    [gone] = admitted.evicted
    assert await episodic_content(stores, gone.item_id) == gone.item.content


async def test_with_the_store_down_a_copy_makes_room_in_a_notes_place() -> None:
    """Long-term store down: the policy's first victim is a note, so a copy of long-term
    memory leaves in its place and the newcomer is admitted."""
    stores = Stores.in_memory()
    buffer, _ = down_buffer(stores, max_items=3, policy="fifo")
    await buffer.add(note(0), now=at(0))
    await buffer.add(copy("c"), now=at(1))
    await buffer.add(note(1), now=at(2))
    result = await buffer.add(note(2), now=at(3))
    assert result.outcome.value == "admitted", result.reason
    assert [e.item_id for e in result.evicted] == ["c"]
    assert [i.item_id for i in buffer.items] == ["n0", "n1", "n2"]


async def test_with_the_store_down_a_note_does_not_fade_until_it_can_be_promoted() -> None:
    """Long-term store down: a faded note stays (an ``updated`` event says
    ``promotion_failed``), a faded copy goes; once the store is back the note fades,
    promoted."""
    stores = Stores.in_memory()
    buffer, outage = down_buffer(stores)
    await buffer.add(note(0), now=at(0))
    await buffer.add(copy("c"), now=at(0))
    heard: list[BufferEvent] = []
    buffer.events.subscribe(heard.append)
    gone = await buffer.expire(at(600))
    assert [e.item_id for e in gone] == ["c"]
    assert "n0" in buffer
    failed = [e for e in heard if e.reason == "promotion_failed"]
    assert [(e.kind, e.item_id) for e in failed] == [(EventKind.UPDATED, "n0")]
    assert "episodic store unreachable" in failed[0].details["error"]
    outage.down = False
    [later] = await buffer.expire(at(601))
    assert (later.item_id, later.reason) == ("n0", EvictionReason.FADED)
    assert await episodic_content(stores, "n0") == "Note 0 to keep."


async def test_with_the_store_down_smaller_bounds_wait_for_the_next_load() -> None:
    """Long-term store down: shrinking below the notes raises (nothing changes), and a
    session's load keeps its saved bounds (``deferred``)."""
    stores = Stores.in_memory()
    buffer, _ = down_buffer(stores)
    for n in range(3):
        await buffer.add(note(n), now=at(n))
    with pytest.raises(WorkingMemoryError, match="could not be promoted"):
        await buffer.reconfigure(buffer.config.model_copy(update={"max_items": 1}), now=at(5))
    assert len(buffer) == 3
    config = BufferConfig(max_items=4, base_threshold=0.0)
    session = await SessionBuffer.load(stores.working_memory, KEY, config=config)
    for n in range(3):
        await session.add(note(n), now=at(n))
    await session.save(at(3))
    smaller = config.model_copy(update={"max_items": 1})
    again = await SessionBuffer.load(stores.working_memory, KEY, config=smaller)
    assert again.deferred == smaller
    assert [i.item_id for i in again.items] == ["n0", "n1", "n2"]
    report = await consolidate(stores, KEY, now=at(3600))
    assert set(report.released) == {"n0", "n1", "n2"}
    adopted = await SessionBuffer.load(stores.working_memory, KEY, config=smaller)
    assert adopted.deferred is None and adopted.buffer.config == smaller


async def test_a_session_loaded_without_a_long_term_store_keeps_its_notes() -> None:
    """Loaded with no keeper, a session cannot promote: a newcomer that needs a note to
    leave is refused, saying so, and the notes stay."""
    stores = Stores.in_memory()
    config = BufferConfig(max_items=2, base_threshold=0.0)
    session = await SessionBuffer.load(stores.working_memory, KEY, config=config)
    for n in range(2):
        await session.add(note(n), now=at(n))
    refused = await session.add(note(2), now=at(2))
    assert refused.outcome.value == "refused"
    assert "loaded without a long-term store" in refused.reason
    assert await session.expire(at(900)) == ()
    assert [i.item_id for i in session.items] == ["n0", "n1"]


async def test_a_state_saved_with_keep_until_promoted_still_loads() -> None:
    """A buffer saved by a version with ``keep_until_promoted`` loads after a restart, its
    notes held (the retired setting is read and ignored)."""
    stores = Stores.in_memory()
    session = await open_session(stores, KEY)
    await session.add(note(0), now=at(0))
    saved = await session.save(at(0))
    document = json.loads(saved.state["buffer"])
    document["config"]["keep_until_promoted"] = True
    old = saved.model_copy(update={"state": {"buffer": json.dumps(document)}})
    assert decode(old.state).config == BufferConfig()
    assert BufferConfig.model_validate({"keep_until_promoted": False}) == BufferConfig()
    assert decode(encode(decode(old.state))).items[0].item_id == "n0"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_buffer_settings_are_finite(value: float) -> None:
    """NaN and the infinities are refused for every number setting."""
    for name in ("fade_seconds", "base_threshold", "task_modulation", "keep_priority"):
        with pytest.raises(ValidationError):
            BufferConfig.model_validate({name: value})


@pytest.mark.parametrize("value", [math.nan, math.inf, 0, 2.5])
async def test_consolidation_refuses_a_max_tokens_that_is_no_count(value: float) -> None:
    """``max_tokens`` must be a whole number of at least one."""
    with pytest.raises(ValueError, match="max_tokens"):
        await consolidate(Stores.in_memory(), KEY, now=at(0), max_tokens=value)  # type: ignore[arg-type]
