"""Retrieval's one-pass gathering against the comprehensions it stands for.

:func:`~prefrontal.phases.memory_retrieve._gathered` and
:func:`~prefrontal.phases.memory_retrieve._described` walk the hits and the
items once each; the maps they give must be those of a comprehension per
map (the same keys, in the same order, with the same values), over hits
where ids repeat within and across queries and speakers are strings,
other values or missing.
"""

from __future__ import annotations

import random

from prefrontal.phases.memory_retrieve import _described, _gathered
from prefrontal.stores import MemoryItem, ScoredMemory
from tests.conftest import FIXED_NOW


def _item(rng: random.Random) -> MemoryItem:
    speaker = rng.choice([None, "Lena", "Ana", 7, True])
    return MemoryItem(
        item_id=f"m{rng.randint(0, 30)}",
        agent_id="agent",
        user_id="alice",
        content="text",
        created_at=FIXED_NOW,
        thread_id=rng.choice([None, "t1", "t2"]),
        position=rng.choice([None, rng.randint(0, 9)]),
        metadata={} if speaker is None else {"speaker": speaker},
    )


def test_one_pass_gives_the_maps_of_the_comprehensions() -> None:
    rng = random.Random(49)
    for _ in range(200):
        hits = {
            name: [
                ScoredMemory(item=_item(rng), score=rng.uniform(0, 9))
                for _ in range(rng.randint(0, 25))
            ]
            for name in rng.sample(["input", "context", "feedback"], rng.randint(0, 3))
        }
        items, signals = _gathered(hits)
        want_items = {h.item.item_id: h.item for found in hits.values() for h in found}
        want_signals = {
            name: {h.item.item_id: h.score for h in found} for name, found in hits.items()
        }
        assert list(items.items()) == list(want_items.items())
        assert [(n, list(s.items())) for n, s in signals.items()] == [
            (n, list(s.items())) for n, s in want_signals.items()
        ]
        threads, places, speakers = _described(items)
        assert list(threads.items()) == [(k, i.thread_id) for k, i in items.items()]
        assert list(places.items()) == [
            (k, (i.thread_id, i.position))
            for k, i in items.items()
            if i.thread_id is not None and i.position is not None
        ]
        assert list(speakers.items()) == [
            (k, s if isinstance(s := i.metadata.get("speaker"), str) else None)
            for k, i in items.items()
        ]
