"""A segment's BM25 in one pass against the term-by-term loop, to the bit.

:meth:`Segment.bm25 <prefrontal.stores.memory.segment.Segment.bm25>` scores
every held term's entries at once and sums them into their slots with
``bincount``; the reference below adds each term's scores in turn, from
0.0, as :class:`~prefrontal.retrieval.ranking.Scorer` adds them. Random
segments (items put, replaced and removed, stale postings left in place,
slots reused) and random queries (terms held or not, repeated weights, one
term or many) must give the same array, float for float.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from prefrontal.retrieval.scored_arrays import term_scores
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.memory import segment
from prefrontal.stores.memory.segment import Segment
from tests.conftest import FIXED_NOW

WORDS = [f"w{n}" for n in range(40)]


def term_by_term(
    held: Segment, terms: Sequence[str], weights: Sequence[float], average: float
) -> np.ndarray:
    """Each term's scores added into their slots in turn, from 0.0."""
    scores = np.zeros(held.size)
    for term, weight in zip(terms, weights, strict=True):
        posting = held.postings.get(term)
        if posting is None:
            continue
        slots = posting.slots[: posting.n]
        scores[slots] += term_scores(
            weight, posting.counts[: posting.n], held.length[slots], average
        )
    return scores


def item(number: int) -> MemoryItem:
    return MemoryItem(
        item_id=f"m{number}",
        agent_id="agent",
        user_id="alice",
        content="text",
        created_at=FIXED_NOW,
    )


def random_segment(rng: random.Random) -> Segment:
    held = Segment()
    docs: list[str] = []
    for number in range(rng.randint(0, 120)):
        if docs and rng.random() < 0.25:
            held.remove(docs.pop(rng.randrange(len(docs))))
            continue
        doc = f"d{rng.randint(0, 150)}"
        held.remove(doc)
        words = rng.choices(WORDS, k=rng.randint(1, 12))
        held.put(doc, item(number), Counter(words), None)
        docs.append(doc)
    return held


def test_one_pass_gives_the_term_by_term_sums_to_the_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segment, "COMPACT_AT", 8)  # compactions and reused slots as well
    rng = random.Random(51)
    for _ in range(300):
        held = random_segment(rng)
        terms = sorted(set(rng.choices([*WORDS, "absent"], k=rng.randint(0, 25))))
        weights = [rng.choice((0.3, 1.7, rng.uniform(0.01, 5.0))) for _ in terms]
        average = rng.uniform(1.0, 9.0)
        got = held.bm25(terms, weights, average)
        want = term_by_term(held, terms, weights, average)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
