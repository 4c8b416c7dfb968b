"""The buffer under its default settings is bounded: it evicts, fades and folds notes by its
policy (the behaviours of the seeds' buffers), never refusing a newcomer to keep a note."""

from __future__ import annotations

import pytest

from prefrontal.buffer import (
    BufferConfig,
    BufferEvent,
    EventKind,
    EvictionReason,
    NewItem,
    OverflowPolicy,
    WorkingMemoryBuffer,
)

from .conftest import at, words

pytestmark = pytest.mark.anyio


def note(n: int, tokens: int = 4) -> NewItem:
    """A note of the agent's own (session lifetime, priority 0.9) of ``tokens`` words."""
    words_ = " ".join(f"w{n}x{k}" for k in range(tokens))
    return NewItem(content=words_, item_id=f"n{n}", priority=0.9, tokens=tokens)


def buffer_of(**settings: object) -> WorkingMemoryBuffer:
    """A buffer with the default settings but for ``settings``, counting words."""
    return WorkingMemoryBuffer(BufferConfig.model_validate(settings), count_tokens=words)


def listen(buffer: WorkingMemoryBuffer) -> list[BufferEvent]:
    """Every event the buffer publishes from now on."""
    heard: list[BufferEvent] = []
    buffer.events.subscribe(heard.append)
    return heard


async def test_four_four_four_tokens_into_a_ten_token_fifo_buffer_evict_the_first() -> None:
    """Notes of 4 + 4 + 4 tokens into a 10-token FIFO buffer: the third is admitted and the
    first evicted (reason ``policy``), with one ``evicted`` event naming it."""
    buffer = buffer_of(max_tokens=10, policy="fifo")
    heard = listen(buffer)
    for n in range(3):
        result = await buffer.add(note(n), now=at(n))
        assert result.outcome.value == "admitted", result.reason
    assert [i.item_id for i in buffer.items] == ["n1", "n2"]
    assert [e.item_id for e in result.evicted] == ["n0"]
    evicted = [e for e in heard if e.kind is EventKind.EVICTED]
    assert [(e.item_id, e.reason) for e in evicted] == [("n0", "policy")]
    assert buffer.total_tokens == 8


@pytest.mark.parametrize("policy", [p for p in OverflowPolicy if p is not OverflowPolicy.SUMMARIZE])
async def test_a_note_idle_past_its_fade_time_fades(policy: OverflowPolicy) -> None:
    """A note idle 400 s (fade time 300 s) fades: ``expire`` returns it, a ``faded`` eviction
    event announces it, and it is no longer held."""
    buffer = buffer_of(policy=policy.value)
    await buffer.add(note(0), now=at(0))
    heard = listen(buffer)
    gone = await buffer.expire(at(400))
    assert [(e.item_id, e.reason) for e in gone] == [("n0", EvictionReason.FADED)]
    assert [(e.kind, e.item_id, e.reason) for e in heard] == [(EventKind.EVICTED, "n0", "faded")]
    assert "n0" not in buffer


async def test_a_note_idle_past_its_fade_time_folds_under_summarize() -> None:
    """Under SUMMARIZE a faded note is folded into the rolling summary (reason ``summarized``)."""
    buffer = buffer_of(policy="summarize", summary_min_tokens=2)
    await buffer.add(note(0, tokens=6), now=at(0))
    gone = await buffer.expire(at(400))
    assert [(e.item_id, e.reason) for e in gone] == [("n0", EvictionReason.SUMMARIZED)]
    [summary] = buffer.items
    assert summary.is_summary and summary.summary_of == ("n0",)


@pytest.mark.parametrize("policy", list(OverflowPolicy))
async def test_reconfigure_shrinks_by_the_policy(policy: OverflowPolicy) -> None:
    """Three notes, bounds cut to one item: two leave (reason ``reconfigured``), no error."""
    buffer = buffer_of(policy=policy.value)
    for n in range(3):
        await buffer.add(note(n), now=at(n))
    gone = await buffer.reconfigure(buffer.config.model_copy(update={"max_items": 1}), now=at(5))
    assert len(gone) == 2
    assert {e.reason for e in gone} == {EvictionReason.RECONFIGURED}
    assert len(buffer) == 1
    assert buffer.config.max_items == 1


async def test_notes_are_summarized_to_make_room() -> None:
    """SUMMARIZE, three slots: a fourth note folds the first-to-go notes into a summary item
    (each ``summarized``) and is admitted."""
    buffer = buffer_of(policy="summarize", max_items=3, summary_min_tokens=2)
    for n in range(3):
        await buffer.add(note(n, tokens=6), now=at(n))
    result = await buffer.add(note(3, tokens=6), now=at(3))
    assert result.outcome.value == "admitted", result.reason
    assert result.evicted
    assert {e.reason for e in result.evicted} == {EvictionReason.SUMMARIZED}
    [summary] = [i for i in buffer.items if i.is_summary]
    assert set(summary.summary_of) == {e.item_id for e in result.evicted}
    assert "n3" in buffer and len(buffer) <= 3


async def test_a_long_run_of_notes_keeps_one_rolling_summary() -> None:
    """Forty notes through a four-slot SUMMARIZE buffer: every one is admitted, one summary
    is ever held, and it names every note that left."""
    buffer = buffer_of(policy="summarize", max_items=4, max_tokens=200, summary_min_tokens=2)
    left: set[str] = set()
    for n in range(40):
        result = await buffer.add(note(n, tokens=6), now=at(n))
        assert result.outcome.value == "admitted", result.reason
        left |= {e.item_id for e in result.evicted}
        assert len([i for i in buffer.items if i.is_summary]) <= 1
        assert buffer.total_tokens <= 200 and len(buffer) <= 4
    [summary] = [i for i in buffer.items if i.is_summary]
    assert left - {summary.item_id} <= set(summary.summary_of)
    assert len(summary.summary_of) >= 36


async def test_each_victim_has_its_own_eviction_event() -> None:
    """A note that needs the room of two others evicts both, one ``evicted`` event each,
    carrying the victim and the policy."""
    buffer = buffer_of(max_tokens=12, policy="lru")
    for n in range(3):
        await buffer.add(note(n), now=at(n))
    heard = listen(buffer)
    result = await buffer.add(note(9, tokens=8), now=at(5))
    assert result.outcome.value == "admitted", result.reason
    evicted = [e for e in heard if e.kind is EventKind.EVICTED]
    assert [e.item_id for e in evicted] == ["n0", "n1"]
    assert all(e.victim is not None and e.victim.item_id == e.item_id for e in evicted)
    assert {e.policy for e in evicted} == {OverflowPolicy.LRU}


async def test_a_restored_buffer_keeps_its_bounds() -> None:
    """A buffer restored from its snapshot evicts by its policy once full, as before."""
    buffer = buffer_of(max_items=3, policy="fifo")
    for n in range(3):
        await buffer.add(note(n), now=at(n))
    restored = WorkingMemoryBuffer.restore(buffer.snapshot(), count_tokens=words)
    result = await restored.add(note(3), now=at(3))
    assert result.outcome.value == "admitted", result.reason
    assert [e.item_id for e in result.evicted] == ["n0"]
    assert [i.item_id for i in restored.items] == ["n1", "n2", "n3"]
