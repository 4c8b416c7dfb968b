"""The in-memory store's vectors: one contiguous matrix per agent and size, searched by numpy.

Each embedded item's vector, scaled to unit length in float64, is a row of
its agent's matrix of its size; beside it are what search filters on, as
arrays: the owner, whether the item is shared, whether it was superseded,
when it expires (µs) and its kind. A search is one mask over those arrays
(tenancy, liveness and kind inside the search: other users' private items,
dead items and other kinds are never scored) and one matrix-vector product
over the allowed rows, with no pass over the items in Python.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta

import numpy as np

from prefrontal.retrieval.vector_index import grown_to
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.tenancy import Scope, Tenant

FOREVER = int(np.iinfo(np.int64).max)
"""The expiry (µs) of an item that never expires."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def microseconds(value: datetime) -> int:
    """``value`` as integer microseconds since the epoch (naive is read as UTC)."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return (aware - _EPOCH) // _MICROSECOND


def unit(vector: tuple[float, ...]) -> np.ndarray:
    """``vector`` in float64 scaled to unit length (unchanged when its norm is 0)."""
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


class UnitRows:
    """The unit vectors of one agent of one size and their filter columns.

    Rows are named by the store's index id; a freed slot is reused.
    """

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.slots: dict[str, int] = {}
        self.free: list[int] = []
        self.size = 0
        self.docs: list[str] = []
        self.matrix = np.zeros((0, dimensions), dtype=np.float64)
        self.present = np.zeros(0, dtype=bool)
        self.shared = np.zeros(0, dtype=bool)
        self.dead = np.zeros(0, dtype=bool)
        self.until = np.zeros(0, dtype=np.int64)
        self.user = np.zeros(0, dtype=np.int32)
        self.kind = np.zeros(0, dtype=np.int32)
        self._codes: dict[str, int] = {}

    def code(self, text: str) -> int:
        """The number standing for a user id or kind in the filter columns."""
        return self._codes.setdefault(text, len(self._codes))

    def put(self, doc: str, item: MemoryItem, vector: np.ndarray) -> None:
        """Hold ``item``'s unit ``vector`` under ``doc``, replacing what ``doc`` held."""
        slot = self.slots.get(doc)
        if slot is None:
            slot = self.slots[doc] = self._slot()
            self.docs[slot] = doc
        self.matrix[slot] = vector
        self.present[slot] = True
        self.shared[slot] = item.scope is Scope.SHARED
        self.dead[slot] = item.superseded_by is not None
        self.until[slot] = FOREVER if item.valid_until is None else microseconds(item.valid_until)
        self.user[slot] = self.code(item.user_id)
        self.kind[slot] = self.code(item.kind)

    def mark(self, doc: str, item: MemoryItem) -> None:
        """Update the filter columns of ``doc`` from ``item`` (its vector unchanged)."""
        slot = self.slots.get(doc)
        if slot is not None:
            self.dead[slot] = item.superseded_by is not None

    def drop(self, doc: str) -> None:
        """Forget ``doc`` (nothing when it is not held)."""
        slot = self.slots.pop(doc, None)
        if slot is not None:
            self.present[slot] = False
            self.docs[slot] = ""
            self.free.append(slot)

    def __len__(self) -> int:
        return len(self.slots)

    def allowed(self, tenant: Tenant, now: datetime, kinds: Collection[str] | None) -> np.ndarray:
        """The slots ``tenant`` may see (shared or its own), live at ``now``, of ``kinds``."""
        n = self.size
        mask: np.ndarray = self.present[:n] & ~self.dead[:n] & (self.until[:n] > microseconds(now))
        mask &= self.shared[:n] | (self.user[:n] == self._codes.get(tenant.user_id, -1))
        if kinds is not None:
            codes = [self._codes[kind] for kind in kinds if kind in self._codes]
            mask &= np.isin(self.kind[:n], codes)
        return np.flatnonzero(mask)

    def cosines(
        self, tenant: Tenant, now: datetime, kinds: Collection[str] | None, query: np.ndarray
    ) -> dict[str, float]:
        """The cosine of unit ``query`` with each row :meth:`allowed` gives, by index id."""
        slots = self.allowed(tenant, now, kinds)
        if not len(slots):
            return {}
        values = (self.matrix[: self.size] @ query)[slots]
        docs, at = self.docs, slots.tolist()
        return {docs[slot]: value for slot, value in zip(at, values.tolist(), strict=True)}

    def _slot(self) -> int:
        if self.free:
            return self.free.pop()
        if self.size == len(self.present):
            self._grow(max(1_024, 2 * self.size))
        self.docs.append("")
        self.size += 1
        return self.size - 1

    def _grow(self, capacity: int) -> None:
        def grown(array: np.ndarray) -> np.ndarray:
            return grown_to(array, capacity)

        self.matrix, self.present = grown(self.matrix), grown(self.present)
        self.shared, self.dead = grown(self.shared), grown(self.dead)
        self.until, self.user, self.kind = grown(self.until), grown(self.user), grown(self.kind)


class AgentVectors:
    """Every :class:`UnitRows` of a store, by agent and size, and where each index id is."""

    def __init__(self) -> None:
        self.by_agent: dict[tuple[str, int], UnitRows] = {}
        self.where: dict[str, tuple[str, int]] = {}

    def put(self, doc: str, item: MemoryItem) -> None:
        """Hold ``item``'s embedding under ``doc`` (forget ``doc`` when it has none)."""
        self.drop(doc)
        if not item.embedding:
            return
        place = (item.agent_id, len(item.embedding))
        rows = self.by_agent.get(place)
        if rows is None:
            rows = self.by_agent[place] = UnitRows(place[1])
        rows.put(doc, item, unit(item.embedding))
        self.where[doc] = place

    def mark(self, doc: str, item: MemoryItem) -> None:
        """Follow a change of ``item``'s supersession under ``doc``."""
        place = self.where.get(doc)
        if place is not None:
            self.by_agent[place].mark(doc, item)

    def drop(self, doc: str) -> None:
        """Forget ``doc`` wherever it is held."""
        place = self.where.pop(doc, None)
        if place is not None:
            rows = self.by_agent[place]
            rows.drop(doc)
            if not rows:
                del self.by_agent[place]

    def cosines(
        self,
        tenant: Tenant,
        now: datetime,
        kinds: Collection[str] | None,
        embedding: tuple[float, ...],
    ) -> dict[str, float]:
        """The cosine of ``embedding`` with each live item of its size ``tenant`` may see."""
        rows = self.by_agent.get((tenant.agent_id, len(embedding)))
        if rows is None or not any(embedding):
            return {}
        return rows.cosines(tenant, now, kinds, unit(embedding))
