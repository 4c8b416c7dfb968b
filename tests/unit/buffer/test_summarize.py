"""SUMMARIZE: evicted items folded into one summary item, within the bounds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from prefrontal.buffer import (
    BufferConfig,
    BufferItem,
    EvictionReason,
    ExtractiveSummarizer,
    Focus,
    OverflowPolicy,
    WorkingMemoryBuffer,
)
from prefrontal.buffer.summarizer import first_sentence, fit_tokens

from .conftest import at, item, make_buffer, words

pytestmark = pytest.mark.anyio


async def _filled(**config: Any) -> WorkingMemoryBuffer:
    buffer = make_buffer(OverflowPolicy.SUMMARIZE, **config)
    for i in range(4):
        text = f"Fact number {i} is about the trip. More detail follows here."
        await buffer.add(item(text, item_id=f"f{i}", priority=0.2 + i / 10), now=at(i))
    return buffer


async def test_evicted_items_are_folded_into_a_summary() -> None:
    """The evicted items' first sentences survive in one summary item that names them."""
    buffer = await _filled(max_items=4, max_tokens=100, summary_min_tokens=5)
    result = await buffer.add(item("A new arrival.", item_id="new"), now=at(10))
    assert result.evicted
    assert all(e.reason is EvictionReason.SUMMARIZED for e in result.evicted)
    summaries = [i for i in buffer.items if i.summary_of]
    assert len(summaries) == 1
    summary = summaries[0]
    assert set(summary.summary_of) == {e.item_id for e in result.evicted}
    assert "Fact number" in summary.content
    assert "summary" in summary.tags
    assert all(e.detail == f"folded into summary {summary.item_id}" for e in result.evicted)
    assert len(buffer) <= 4
    assert buffer.total_tokens <= 100
    assert buffer.counters.summarized == 1


async def test_summary_falls_back_to_dropping_when_it_cannot_fit() -> None:
    """When a summary cannot have summary_min_tokens, items are evicted plainly."""
    buffer = await _filled(max_items=4, max_tokens=48, summary_min_tokens=46)
    result = await buffer.add(item("A new arrival.", item_id="new"), now=at(10))
    assert result.evicted
    assert {e.reason for e in result.evicted} == {EvictionReason.POLICY}
    assert not any(i.summary_of for i in buffer.items)


async def test_an_oversized_summary_is_trimmed_to_the_room() -> None:
    """Whatever a summarizer returns, the buffer trims it to the room it has."""

    class Verbose:
        async def __call__(
            self, items: Sequence[BufferItem], max_tokens: int, count_tokens: object
        ) -> str:
            return "blah " * 10_000

    buffer = WorkingMemoryBuffer(
        BufferConfig(
            policy=OverflowPolicy.SUMMARIZE,
            max_items=3,
            max_tokens=30,
            base_threshold=0.0,
            summary_min_tokens=2,
        ),
        count_tokens=words,
        summarizer=Verbose(),
    )
    for i in range(3):
        await buffer.add(item(f"entry {i} " * 4, item_id=f"e{i}"), now=at(i))
    await buffer.add(item("fresh item here", item_id="new"), now=at(5))
    assert buffer.total_tokens <= 30
    assert "new" in buffer


async def test_extractive_summarizer_takes_first_sentences_by_priority() -> None:
    """The default summarizer is deterministic: most important first sentence first."""
    buffer = make_buffer()
    await buffer.add(item("Low one. Tail.", item_id="l", priority=0.1), now=at(0))
    await buffer.add(item("High one! Tail.", item_id="h", priority=0.9), now=at(0))
    text = await ExtractiveSummarizer()(buffer.items, 100, words)
    assert text == "- High one!\n- Low one."


def test_fit_tokens_cuts_at_a_word_within_the_budget() -> None:
    """fit_tokens returns the longest word prefix within the budget."""
    assert fit_tokens("a b c d e", 3, words) == "a b c"
    assert fit_tokens("a b", 3, words) == "a b"
    assert first_sentence("One.  Two.") == "One."


async def test_folding_the_same_item_twice_makes_two_distinct_summaries() -> None:
    """An item folded, re-added and folded again yields a new summary, never a clash."""
    buffer = make_buffer(OverflowPolicy.SUMMARIZE, max_items=3, max_tokens=30, summary_min_tokens=1)
    await buffer.add(item("trip 2", tokens=4, pinned=True), now=at(0))
    for n in range(3):
        await buffer.add(item("trip 0", item_id="again", tokens=17), now=at(n))
        await buffer.add(item("trip 1", item_id=f"other{n}", tokens=4), now=at(n))
    summaries = [i.item_id for i in buffer.items if i.summary_of]
    assert len(summaries) == len(set(summaries))
    assert buffer.total_tokens == sum(i.tokens for i in buffer.items) <= 30


def _long_run_buffer(max_items: int = 4, max_tokens: int = 60) -> WorkingMemoryBuffer:
    return make_buffer(
        OverflowPolicy.SUMMARIZE,
        max_items=max_items,
        max_tokens=max_tokens,
        summary_min_tokens=4,
    )


def _summaries(buffer: WorkingMemoryBuffer) -> list[BufferItem]:
    return [i for i in buffer.items if i.summary_of]


def _assert_bounded(buffer: WorkingMemoryBuffer) -> None:
    assert len(buffer) <= buffer.config.max_items
    assert buffer.total_tokens <= buffer.config.max_tokens
    assert buffer.total_tokens == sum(i.tokens for i in buffer.items)


async def test_two_hundred_adds_keep_one_summary_that_grows() -> None:
    """In 200 adds under SUMMARIZE the buffer holds at most one summary item, grown in place."""
    buffer = _long_run_buffer()
    seen_ids: set[str] = set()
    for n in range(200):
        text = f"Note {n} about topic {n % 7}. Detail follows."
        await buffer.add(item(text, item_id=f"n{n}", priority=(n * 37 % 100) / 100), now=at(n))
        summaries = _summaries(buffer)
        assert len(summaries) <= 1
        seen_ids.update(s.item_id for s in summaries)
        _assert_bounded(buffer)
    assert len(seen_ids) == 1
    [summary] = _summaries(buffer)
    held = {i.item_id for i in buffer.items}
    assert {f"n{n}" for n in range(200)} <= set(summary.summary_of) | held
    assert summary.tokens <= 60 // 4


async def test_bounds_hold_at_every_moment_of_a_long_summarize_run() -> None:
    """No event of a 200-add SUMMARIZE run ever sees the buffer above its item or token bound."""
    buffer = _long_run_buffer(max_items=5, max_tokens=40)
    seen: list[tuple[int, int]] = []
    buffer.events.subscribe(lambda e: seen.append((e.total_items, e.total_tokens)))
    for n in range(200):
        await buffer.add(item(f"Item {n} says something. More.", item_id=f"i{n}"), now=at(n * 7))
        if n % 25 == 0:
            await buffer.fade(now=at(n * 7))
    assert seen
    assert all(items <= 5 and tokens <= 40 for items, tokens in seen)


async def test_faded_items_are_folded_not_dropped() -> None:
    """Under SUMMARIZE, items that fade out go into the summary with reason `summarized`."""
    buffer = _long_run_buffer(max_items=6, max_tokens=100)
    await buffer.add(item("The hotel is booked. Room 12.", item_id="hotel"), now=at(0))
    await buffer.add(item("The flight leaves at nine. Gate B.", item_id="flight"), now=at(0))
    await buffer.add(item("Still fresh.", item_id="fresh"), now=at(200))
    gone = await buffer.fade(now=at(400))
    assert {(e.item_id, e.reason) for e in gone} == {
        ("hotel", EvictionReason.SUMMARIZED),
        ("flight", EvictionReason.SUMMARIZED),
    }
    [summary] = _summaries(buffer)
    assert set(summary.summary_of) == {"hotel", "flight"}
    assert "The hotel is booked." in summary.content
    assert "fresh" in buffer
    again = await buffer.fade(now=at(900))
    assert [e.item_id for e in again] == ["fresh"]
    [grown] = _summaries(buffer)
    assert grown.item_id == summary.item_id
    assert set(grown.summary_of) == {"hotel", "flight", "fresh"}
    assert "The hotel is booked." in grown.content and "Still fresh." in grown.content


async def test_fading_drops_under_other_policies() -> None:
    """Outside SUMMARIZE, faded items are dropped with reason `faded`, as before."""
    buffer = make_buffer(OverflowPolicy.COMPOSITE)
    await buffer.add(item("Old news.", item_id="old"), now=at(0))
    gone = await buffer.fade(now=at(400))
    assert [(e.item_id, e.reason) for e in gone] == [("old", EvictionReason.FADED)]
    assert not _summaries(buffer)


async def test_a_refresh_folds_what_faded_since_the_last_turn() -> None:
    """A turn's refresh under SUMMARIZE folds the agent's faded notes into the summary."""
    buffer = _long_run_buffer(max_items=6, max_tokens=100)
    await buffer.add(item("Tool said the API is down. Retry later.", item_id="tool"), now=at(0))
    report = await buffer.refresh_turn([], focus=Focus(input_text="status"), now=at(600))
    assert [(e.item_id, e.reason) for e in report.evicted] == [("tool", EvictionReason.SUMMARIZED)]
    [summary] = _summaries(buffer)
    assert "Tool said the API is down." in summary.content


async def test_growing_summary_keeps_the_newest_lines_when_full() -> None:
    """A full summary makes room for newly folded lines by dropping its oldest lines."""
    summarizer = ExtractiveSummarizer()
    old = BufferItem.model_validate(
        {
            "item_id": "s",
            "content": "- one one one\n- two two two",
            "source": "system",
            "tokens": 8,
            "priority": 0.9,
            "salience": 0.5,
            "added_at": at(0),
            "last_accessed_at": at(0),
            "summary_of": ("a", "b"),
            "provenance": {"phase": "buffer.summarize"},
        }
    )
    new = BufferItem.model_validate(
        {
            "item_id": "c",
            "content": "three three three. tail",
            "source": "system",
            "tokens": 4,
            "priority": 0.1,
            "salience": 0.5,
            "added_at": at(1),
            "last_accessed_at": at(1),
        }
    )
    assert await summarizer([old, new], 100, words) == (
        "- one one one\n- two two two\n- three three three."
    )
    assert await summarizer([old, new], 9, words) == "- two two two\n- three three three."


async def test_expire_folds_under_summarize_as_a_turns_fade_does() -> None:
    """The buffer's own expire() folds faded items into the summary, as a turn's fade does."""
    buffer = _long_run_buffer(max_items=6, max_tokens=100)
    await buffer.add(item("The hotel is booked. Room 12.", item_id="hotel"), now=at(0))
    gone = await buffer.expire(now=at(400))
    assert [(e.item_id, e.reason) for e in gone] == [("hotel", EvictionReason.SUMMARIZED)]
    [summary] = _summaries(buffer)
    assert "The hotel is booked." in summary.content
