"""Building a search hit: validation against ``model_construct``, measured in the same run.

Run with ``make bench``. Phase 5 and 6 build hundreds of
:class:`~prefrontal.stores.ScoredMemory` a turn from items that are already
valid; pydantic's validator takes a model instance as it is, and measures
faster than ``model_construct``, which fills defaults and the fields set in
Python. The ratio is reported, not asserted.
"""

from __future__ import annotations

from datetime import UTC, datetime

from prefrontal.stores.long_term import MemoryItem, ScoredMemory

ITEM = MemoryItem(
    item_id="m1",
    agent_id="assistant",
    user_id="ada",
    content="Ada wants to visit Lisbon in May.",
    created_at=datetime(2026, 11, 22, 10, 0, tzinfo=UTC),
)
SIGNALS = {"input": 0.5, "context": 0.2}


def test_scored_memory_validated(benchmark) -> None:  # type: ignore[no-untyped-def]
    """One hit built by validation, the way phases 5 and 6 build them."""
    hit = benchmark(lambda: ScoredMemory(item=ITEM, score=0.5, signals=dict(SIGNALS)))
    assert hit.item is ITEM


def test_scored_memory_constructed(benchmark) -> None:  # type: ignore[no-untyped-def]
    """One hit built with ``model_construct``, the path phases 5 and 6 took before."""
    hit = benchmark(
        lambda: ScoredMemory.model_construct(item=ITEM, score=0.5, signals=dict(SIGNALS))
    )
    assert hit.item is ITEM
