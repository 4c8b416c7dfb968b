"""The base of every stored record: frozen, strict, owned, timestamped."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field

from prefrontal.model_reads import FastReads
from prefrontal.stores.tenancy import Id, Scope


def _aware(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC; every stored time is timezone-aware."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


Timestamp = Annotated[datetime, AfterValidator(_aware)]
"""A timezone-aware datetime (naive input is read as UTC)."""

NonEmptyId = Id
"""An id (see :data:`prefrontal.stores.tenancy.Id`)."""

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
"""A float that is a number: ``NaN`` and the infinities are refused, as JSON cannot hold them."""

MAX_LABEL_CHARS = 256
MAX_LABELS = 64
MAX_LINE_CHARS = 2_000
MAX_LINES = 100
MAX_METADATA_KEYS = 64
MAX_VECTOR_DIMENSIONS = 8_192

Label = Annotated[str, Field(max_length=MAX_LABEL_CHARS)]
"""A tag, an entity, a speaker, a mode's name: a short name, never a document."""

Labels = Annotated[tuple[Label, ...], Field(max_length=MAX_LABELS)]
"""At most 64 labels: a caller cannot stall the event loop with megabytes of tags."""

Line = Annotated[str, Field(max_length=MAX_LINE_CHARS)]
"""One rule, value, topic or decision: a sentence or a short paragraph."""

Lines = Annotated[tuple[Line, ...], Field(max_length=MAX_LINES)]
"""At most 100 lines."""

MetadataValue = Line | int | FiniteFloat | bool
"""Metadata is flat: strings (of at most 2,000 characters), finite numbers and booleans only,
so every backend can index it.

A ``NaN`` stored once would fail every later read of its row, so it is refused
on the way in.
"""

Metadata = Annotated[
    dict[Label, MetadataValue],
    Field(max_length=MAX_METADATA_KEYS),
]
"""At most 64 keys of at most 256 characters, string values of at most 2,000."""

Vector = Annotated[tuple[FiniteFloat, ...], Field(max_length=MAX_VECTOR_DIMENSIONS)]
"""An embedding: finite floats only, at most 8,192 dimensions."""


def utc_now() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


class Record(FastReads):
    """A frozen value model that rejects unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class OwnedRecord(Record):
    """A record that belongs to an agent and, unless shared, to one of its users."""

    item_id: NonEmptyId
    agent_id: NonEmptyId
    user_id: NonEmptyId
    scope: Scope = Scope.PRIVATE
    created_at: Timestamp = Field(default_factory=utc_now)
