"""The base of every stored record: frozen, strict, owned, timestamped."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from prefrontal.stores.tenancy import Scope


def _aware(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC; every stored time is timezone-aware."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


Timestamp = Annotated[datetime, AfterValidator(_aware)]
"""A timezone-aware datetime (naive input is read as UTC)."""

NonEmptyId = Annotated[str, Field(min_length=1, max_length=256)]

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
"""A float that is a number: ``NaN`` and the infinities are refused, as JSON cannot hold them."""

MetadataValue = str | int | FiniteFloat | bool
"""Metadata is flat: strings, finite numbers and booleans only, so every backend can index it.

A ``NaN`` stored once would fail every later read of its row, so it is refused
on the way in.
"""

Vector = tuple[FiniteFloat, ...]
"""An embedding: finite floats only."""


def utc_now() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


class Record(BaseModel):
    """A frozen value model that rejects unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class OwnedRecord(Record):
    """A record that belongs to an agent and, unless shared, to one of its users."""

    item_id: NonEmptyId
    agent_id: NonEmptyId
    user_id: NonEmptyId
    scope: Scope = Scope.PRIVATE
    created_at: Timestamp = Field(default_factory=utc_now)
