"""The scratch page: short-lived observations, risk alerts, pending confirmations.

Phase 7 reads the active entries.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from pydantic import Field

from prefrontal.enums import FastStrEnum
from prefrontal.stores.frontal_cortex import Owner
from prefrontal.stores.records import Label, Labels, OwnedRecord, Timestamp
from prefrontal.stores.tenancy import Tenant


class ScratchKind(FastStrEnum):
    """What a scratch entry is."""

    OBSERVATION = "observation"
    RISK_ALERT = "risk_alert"
    PENDING_CONFIRMATION = "pending_confirmation"
    INSIGHT = "insight"


class Observation(OwnedRecord):
    """One entry of the scratch page."""

    kind: ScratchKind = ScratchKind.OBSERVATION
    content: str = Field(min_length=1, max_length=20_000)
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    owner: Owner = Owner.AGENT
    tags: Labels = ()
    author: Label | None = None
    """Who wrote it last: a key's name or a reserved author (:mod:`prefrontal.stores.authors`);
    ``None`` for the application's own writes in process."""
    resolved: bool = False
    outcome: Label | None = None
    """How a resolved entry ended: ``confirmed``, ``declined`` or ``resolved``."""
    expires_at: Timestamp | None = None
    version: int = Field(default=1, ge=1)
    """Bumped by every versioned save (:mod:`prefrontal.stores.versioned`)."""


@runtime_checkable
class ScratchPageStore(Protocol):
    """Holds scratch-page entries.

    Contract: ``active`` returns unresolved, unexpired entries visible to
    ``tenant``, highest priority first, then newest, at most ``limit``.
    ``put`` creates or replaces the entry with the same ``item_id`` for the
    same agent and user (ids are unique per agent and user). ``resolve``
    marks the entry :meth:`~prefrontal.stores.MemoryStore.get` would pick
    (the tenant's own first); of an unknown or invisible id it is a no-op
    returning ``False``. ``erase`` removes every entry the tenant owns and
    returns how many.
    """

    async def put(self, observation: Observation) -> None:
        """Create or replace an entry."""
        ...

    async def active(self, tenant: Tenant, *, now: datetime, limit: int) -> list[Observation]:
        """The active entries, most important first."""
        ...

    async def resolve(self, tenant: Tenant, item_id: str) -> bool:
        """Mark an entry resolved; ``True`` if it existed and was visible."""
        ...

    async def erase(self, tenant: Tenant) -> int:
        """Remove every entry ``tenant`` owns; how many were removed."""
        ...
