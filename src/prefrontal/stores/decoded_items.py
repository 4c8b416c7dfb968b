"""A stored memory body decoded once, and a hit made from a decoded item: what the SQLite and
PostgreSQL memory stores share.

Both keep an item's body as JSON (the fields their columns hold left out)
and read the same bodies turn after turn (a session's searches bring up the
same rows). :data:`DECODED` validates each body once while it holds it, by
its text: the decode is a function of the text alone, so one cache serves
every store of the process. The items are frozen, so every read shares the
one decoded. A :class:`~prefrontal.text_cache.TextCache` is in the
forgetting registry: an erase or a forget empties it.
"""

from __future__ import annotations

import sys

from prefrontal.stores.long_term import MemoryItem, ScoredMemory
from prefrontal.text_cache import TextCache
from prefrontal.trusted import assemble

__all__ = ["DECODED", "scored_hit"]


def _body_weight(item: MemoryItem) -> int:
    """About the bytes a decoded body keeps alive: its content twice over (the text and the
    rest of its fields, tags, entities and metadata, rarely more) and the model's own."""
    return 2 * sys.getsizeof(item.content) + 1_000


DECODED: TextCache[MemoryItem] = TextCache(
    MemoryItem.model_validate_json, max_bytes=8_000_000, weigh=_body_weight
)
"""Each stored body's item, validated once while held (the module docstring)."""


def scored_hit(item: MemoryItem, score: float, signals: dict[str, float]) -> ScoredMemory:
    """``ScoredMemory(item=item, score=score, signals=signals)`` without validating again:
    ``item`` is a store's decoded one, the score and the signals are worked out in the process
    (made plain floats, as validation makes NumPy's and integers)."""
    plain = {name: float(value) for name, value in signals.items()}
    return assemble(ScoredMemory, {"item": item, "score": float(score), "signals": plain})
