"""What a consolidation run did: its promotions and the items that left the buffer."""

from __future__ import annotations

from pydantic import Field

from prefrontal.buffer import ItemSource
from prefrontal.stores.records import Record, Timestamp
from prefrontal.stores.working_memory import SessionKey


class Promotion(Record):
    """One group of working-memory items promoted into one episodic item."""

    item_id: str
    """The episodic item's id (derived from the session and ``originals``)."""
    source: ItemSource
    originals: tuple[str, ...]
    """The buffer items it stands for, in insertion order."""
    written: bool
    """False when an earlier, interrupted run had written it already."""
    resumed: bool
    """True when an earlier, interrupted run had marked the group."""


class ConsolidationReport(Record):
    """The outcome of :func:`~prefrontal.formation.consolidate` for one session."""

    session: SessionKey
    at: Timestamp
    promoted: tuple[Promotion, ...] = ()
    released: tuple[str, ...] = ()
    """The ids of the items that left the buffer (reason ``consolidated``)."""
    kept: int = Field(default=0, ge=0)
    """How many items the buffer holds afterwards."""

    @property
    def promoted_ids(self) -> tuple[str, ...]:
        """The ids of the episodic items this run stands behind (written now or before)."""
        return tuple(p.item_id for p in self.promoted)
