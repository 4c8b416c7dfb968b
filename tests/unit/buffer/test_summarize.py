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
