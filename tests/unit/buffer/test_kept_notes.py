"""What the issue of lost notes showed, each as a test: admission, fading, numbers."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from prefrontal.buffer import (
    BufferConfig,
    ItemProvenance,
    ItemSource,
    NewItem,
    OverflowPolicy,
    SessionBuffer,
    WorkingMemoryBuffer,
)
from prefrontal.errors import WorkingMemoryError
from prefrontal.formation import consolidate
from prefrontal.stores import SessionKey, Stores

from .conftest import at, words

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id="agent", user_id="ada", session_id="s-1")


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
async def test_a_note_idle_past_its_fade_out_is_still_held_until_promoted(
    policy: OverflowPolicy,
) -> None:
    """A note the user comes back to ten minutes later is still there; a copy of long-term
    memory fades; consolidation then promotes the note."""
    stores = Stores.in_memory()
    session = await SessionBuffer.load(
        stores.working_memory, KEY, config=BufferConfig(policy=policy, base_threshold=0.0)
    )
    await session.add(NewItem(content="Ada's locker code is 4417.", item_id="n"), now=at(0))
    copy = NewItem(
        content="Ada likes tea.",
        item_id="c",
        source=ItemSource.EXTERNAL,
        provenance=ItemProvenance(store="episodic", item_ids=("m1",)),
    )
    await session.add(copy, now=at(0))
    await session.save(at(0))
    later = await SessionBuffer.load(stores.working_memory, KEY)
    gone = await later.expire(at(600))
    assert [e.item_id for e in gone] == ["c"]  # under SUMMARIZE folded into the summary
    assert [i.item_id for i in later.items if not i.is_summary] == ["n"]
    await later.save(at(600))
    report = await consolidate(stores, KEY, now=at(600))
    assert "n" in {o for p in report.promoted for o in p.originals}
    assert "n" in report.released


async def test_a_marked_item_never_expires() -> None:
    """Marks saved, promotion not done (a stopped consolidation), a turn 400 s later: kept."""
    buffer = WorkingMemoryBuffer(
        BufferConfig(base_threshold=0.0, keep_until_promoted=False), count_tokens=words
    )
    await buffer.add(NewItem(content="Ada's locker code is 4417.", item_id="n"), now=at(0))
    buffer.mark_consolidation({"n": "wmc_x"}, now=at(200))
    assert await buffer.expire(at(600)) == ()
    assert "n" in buffer


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_buffer_settings_are_finite(value: float) -> None:
    for name in ("fade_seconds", "base_threshold", "task_modulation", "keep_priority"):
        with pytest.raises(ValidationError):
            BufferConfig.model_validate({name: value})


@pytest.mark.parametrize("value", [math.nan, math.inf, 0, 2.5])
async def test_consolidation_refuses_a_max_tokens_that_is_no_count(value: float) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        await consolidate(Stores.in_memory(), KEY, now=at(0), max_tokens=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", list(OverflowPolicy))
async def test_a_note_added_to_a_full_buffer_never_evicts_another_note(
    policy: OverflowPolicy,
) -> None:
    """Three notes fill the buffer: a copy of long-term memory may make room for a fourth
    note, a note may not: the newcomer is refused (``no_room``) and every note stays."""
    buffer = WorkingMemoryBuffer(
        BufferConfig(policy=policy, max_items=3, base_threshold=0.0, summary_min_tokens=2),
        count_tokens=words,
    )
    for n in range(2):
        await buffer.add(NewItem(content=f"Note {n} to keep.", item_id=f"n{n}"), now=at(n))
    copy = NewItem(
        content="Ada likes tea.",
        item_id="copy",
        source=ItemSource.MEMORY_RETRIEVAL,
        provenance=ItemProvenance(store="semantic", item_ids=("m1",)),
    )
    await buffer.add(copy, now=at(2))
    admitted = await buffer.add(NewItem(content="Note 2 to keep.", item_id="n2"), now=at(3))
    assert admitted.outcome.value == "admitted"
    assert {e.item.item_id for e in admitted.evicted} <= {"copy"}
    refused = await buffer.add(NewItem(content="Note 3 to keep.", item_id="n3"), now=at(4))
    assert refused.outcome.value == "refused"
    assert refused.reason.startswith("no_room")
    assert [i.item_id for i in buffer.items if not i.is_summary] == ["n0", "n1", "n2"]
    assert all(i.content.startswith("Note") for i in buffer.items if not i.is_summary)


def _copy(item_id: str) -> NewItem:
    """A copy of a long-term memory: it may leave the buffer at any time."""
    return NewItem(
        content=f"Copy {item_id} of a memory.",
        item_id=item_id,
        source=ItemSource.MEMORY_RETRIEVAL,
        provenance=ItemProvenance(store="semantic", item_ids=(f"m-{item_id}",)),
    )


@pytest.mark.parametrize("policy", list(OverflowPolicy))
async def test_shrinking_the_bounds_evicts_copies_never_notes(policy: OverflowPolicy) -> None:
    """Two notes among three copies, bounds cut to two items: the copies leave, under
    every policy; cut to one item, nothing changes and the shrink is refused."""
    config = BufferConfig(policy=policy, max_items=6, base_threshold=0.0, summary_min_tokens=2)
    buffer = WorkingMemoryBuffer(config, count_tokens=words)
    await buffer.add(NewItem(content="Note zero to keep.", item_id="n0"), now=at(0))
    for n in range(3):
        await buffer.add(_copy(f"c{n}"), now=at(1 + n))
    await buffer.add(NewItem(content="Note one to keep.", item_id="n1"), now=at(5))
    with pytest.raises(WorkingMemoryError, match="awaiting promotion do not fit"):
        buffer.reconfigure(config.model_copy(update={"max_items": 1}), now=at(6))
    assert len(buffer) == 5
    gone = buffer.reconfigure(config.model_copy(update={"max_items": 2}), now=at(6))
    assert {e.item.item_id for e in gone} == {"c0", "c1", "c2"}
    assert [i.item_id for i in buffer.items] == ["n0", "n1"]


async def test_a_session_loaded_under_bounds_its_notes_exceed_keeps_them_until_promoted() -> None:
    """A deployment cuts ``max_items`` below the notes a session holds: the turn's load keeps
    every note under the saved bounds (``deferred``); once consolidation promoted them, the
    next load adopts the new bounds."""
    stores = Stores.in_memory()
    config = BufferConfig(max_items=4, base_threshold=0.0)
    session = await SessionBuffer.load(stores.working_memory, KEY, config=config)
    for n in range(3):
        await session.add(NewItem(content=f"Note {n} to keep.", item_id=f"n{n}"), now=at(n))
    await session.save(at(3))
    smaller = config.model_copy(update={"max_items": 1})
    again = await SessionBuffer.load(stores.working_memory, KEY, config=smaller)
    assert again.deferred == smaller
    assert again.reconfigured == ()
    assert again.buffer.config == config
    assert [i.item_id for i in again.items] == ["n0", "n1", "n2"]
    report = await consolidate(stores, KEY, now=at(3600))
    assert set(report.released) == {"n0", "n1", "n2"}
    adopted = await SessionBuffer.load(stores.working_memory, KEY, config=smaller)
    assert adopted.deferred is None
    assert adopted.buffer.config == smaller
