"""What a turn's refresh reads of an offer, and the item it stands for.

A turn offers the buffer every fragment of its context (about a hundred and
fifty in a long conversation), and most of them are refused: the buffer is
full of this turn's best. Scoring an offer, refusing it, renewing a held item
with it or admitting it reads its fields only. An :class:`Offer` is anything
with those fields: a :class:`~prefrontal.buffer.NewItem` is one, and a turn's
phase may offer something lighter that makes its item (:meth:`Offer.made`)
only when the buffer needs the model itself: for an offer that
:meth:`~prefrontal.buffer.WorkingMemoryBuffer.add` takes (a held item that
grew, or an offer larger than the whole buffer).

Contract: every field of an offer is the field of the item :meth:`Offer.made`
gives, so that the buffer decides the same for either.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from prefrontal.buffer.models import ItemProvenance, ItemSource, Lifetime, NewItem


class Offer(Protocol):
    """An item offered to the buffer, as a turn's refresh reads it (a ``NewItem``'s fields)."""

    @property
    def item_id(self) -> str | None: ...
    @property
    def content(self) -> str: ...
    @property
    def source(self) -> ItemSource: ...
    @property
    def tokens(self) -> int | None: ...
    @property
    def priority(self) -> float: ...
    @property
    def urgency(self) -> float: ...
    @property
    def relevance(self) -> float | None: ...
    @property
    def confidence(self) -> float: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def entities(self) -> tuple[str, ...]: ...
    @property
    def occurred_at(self) -> datetime | None: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def lifetime(self) -> Lifetime: ...
    @property
    def provenance(self) -> ItemProvenance: ...
    def resolved_id(self) -> str:
        """``item_id``, or the stable id :meth:`NewItem.resolved_id` derives."""
        ...

    def made(self) -> NewItem:
        """The item offered, with these very fields."""
        ...
