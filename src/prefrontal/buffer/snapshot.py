"""The buffer as data: snapshots, counters and the reports its operations return.

A :class:`BufferSnapshot` is everything a buffer is: restoring one gives a
buffer whose next snapshot is equal to it, and its JSON form (what the
working-memory store keeps) round-trips exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError, dataclass
from enum import StrEnum
from typing import Any, Final

from pydantic import Field

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.models import BufferItem, BufferModel
from prefrontal.buffer.policies import Eviction
from prefrontal.buffer.recall_gate import RecallCounters
from prefrontal.buffer.salience import AdmissionDecision
from prefrontal.buffer.themes import Coherence
from prefrontal.errors import WorkingMemoryError
from prefrontal.stores.records import Timestamp

SNAPSHOT_FORMAT = 1


class BufferCounters(BufferModel):
    """What a buffer has done over its life."""

    admitted: int = Field(default=0, ge=0)
    refreshed: int = Field(default=0, ge=0)
    refused: int = Field(default=0, ge=0)
    evicted: int = Field(default=0, ge=0)
    summarized: int = Field(default=0, ge=0)
    turns: int = Field(default=0, ge=0)


class BufferSnapshot(BufferModel):
    """The whole state of a buffer."""

    format: int = SNAPSHOT_FORMAT
    config: BufferConfig
    items: tuple[BufferItem, ...] = ()
    """In insertion order (ascending ``seq``)."""
    next_seq: int = Field(default=0, ge=0)
    themes: tuple[str, ...] = ()
    counters: BufferCounters = Field(default_factory=BufferCounters)
    recall: RecallCounters = Field(default_factory=RecallCounters)
    started_at: Timestamp | None = None
    last_activity: Timestamp | None = None

    def check(self) -> BufferSnapshot:
        """Raise :class:`WorkingMemoryError` unless this snapshot is a valid buffer state."""
        ids = [item.item_id for item in self.items]
        problems = [
            "duplicate item ids" if len(set(ids)) != len(ids) else "",
            "more items than max_items" if len(ids) > self.config.max_items else "",
            "more tokens than max_tokens"
            if sum(i.tokens for i in self.items) > self.config.max_tokens
            else "",
            "items out of order"
            if [i.seq for i in self.items] != sorted(i.seq for i in self.items)
            else "",
            "next_seq not above every item"
            if any(i.seq >= self.next_seq for i in self.items)
            else "",
            f"unknown snapshot format {self.format}" if self.format != SNAPSHOT_FORMAT else "",
        ]
        found = [p for p in problems if p]
        if found:
            raise WorkingMemoryError(f"invalid buffer snapshot: {', '.join(found)}")
        return self


class Outcome(StrEnum):
    """What became of an offered item."""

    ADMITTED = "admitted"
    REFRESHED = "refreshed"
    """Already held: touched and updated, not added twice."""
    REFUSED = "refused"


Explainer = Callable[[Any], tuple[str, AdmissionDecision | None]]
"""Works out a refusal's reason and decision from what it was refused for (:class:`AddResult`)."""


class AddResult:
    """The fate of one offered item: admitted, refreshed or refused, and why.

    Like the other reports of the buffer's operations (:class:`RefreshReport`,
    :class:`~prefrontal.buffer.AdmissionDecision`,
    :class:`~prefrontal.buffer.Eviction`), a plain, frozen value: built for
    every offer of every turn and never stored, so no validated model. A
    refusal may be made with its :attr:`reason` and :attr:`decision` left to
    work out (:func:`refused_later`): most of a turn's offers are refused and
    few of those reasons are ever read. Equal results have equal fields,
    however they were made.
    """

    __slots__ = (
        "_decision",
        "_explainer",
        "_reason",
        "_subject",
        "evicted",
        "item",
        "item_id",
        "outcome",
        "tokens",
    )
    FIELDS: Final = ("item_id", "outcome", "reason", "tokens", "decision", "item", "evicted")
    """The fields, in order: what equality, hashing and the representation use."""

    item_id: str
    outcome: Outcome
    tokens: int
    item: BufferItem | None
    evicted: tuple[Eviction, ...]
    _reason: str
    _decision: AdmissionDecision | None
    _explainer: Explainer | None
    _subject: object

    def __init__(
        self,
        item_id: str,
        outcome: Outcome,
        reason: str,
        tokens: int,
        decision: AdmissionDecision | None = None,
        item: BufferItem | None = None,
        evicted: tuple[Eviction, ...] = (),
    ) -> None:
        _fill(self, item_id, outcome, reason, tokens, decision, item, evicted, None, None)

    @property
    def reason(self) -> str:
        """Why: ``admitted``, ``already_held``, or the refusal's reason."""
        explainer = self._explainer
        if explainer is not None:
            self._explain(explainer)
        return self._reason

    @property
    def decision(self) -> AdmissionDecision | None:
        """The admission decision (``None`` when refused before scoring or when refreshed)."""
        explainer = self._explainer
        if explainer is not None:
            self._explain(explainer)
        return self._decision

    def _explain(self, explainer: Explainer) -> None:
        reason, decision = explainer(self._subject)
        _set_reason(self, reason)
        _set_decision(self, decision)
        _set_explainer(self, None)
        _set_subject(self, None)

    def _fields(self) -> tuple[object, ...]:
        return (
            self.item_id,
            self.outcome,
            self.reason,
            self.tokens,
            self.decision,
            self.item,
            self.evicted,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AddResult):
            return NotImplemented
        return self is other or self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self.FIELDS, self._fields(), strict=True))
        return f"AddResult({shown})"

    def __reduce__(self) -> tuple[type[AddResult], tuple[object, ...]]:
        return AddResult, self._fields()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


_slot = AddResult.__dict__
_set_reason = _slot["_reason"].__set__
_set_decision = _slot["_decision"].__set__
_set_explainer = _slot["_explainer"].__set__
_set_subject = _slot["_subject"].__set__
_result_setters = tuple(
    _slot[name].__set__
    for name in (
        "item_id",
        "outcome",
        "_reason",
        "tokens",
        "_decision",
        "item",
        "evicted",
        "_explainer",
        "_subject",
    )
)
_new = object.__new__


def _fill(  # noqa: PLR0913
    result: AddResult,
    item_id: str,
    outcome: Outcome,
    reason: str | None,
    tokens: int,
    decision: AdmissionDecision | None,
    item: BufferItem | None,
    evicted: tuple[Eviction, ...],
    explainer: Explainer | None,
    subject: object,
) -> None:
    s_id, s_outcome, s_reason, s_tokens, s_decision, s_item, s_evicted, s_explainer, s_subject = (
        _result_setters
    )
    s_id(result, item_id)
    s_outcome(result, outcome)
    s_reason(result, reason)
    s_tokens(result, tokens)
    s_decision(result, decision)
    s_item(result, item)
    s_evicted(result, evicted)
    s_explainer(result, explainer)
    s_subject(result, subject)


def add_result(
    item_id: str,
    outcome: Outcome,
    reason: str,
    tokens: int,
    decision: AdmissionDecision | None = None,
    item: BufferItem | None = None,
    evicted: tuple[Eviction, ...] = (),
) -> AddResult:
    """``AddResult(item_id, outcome, ...)``, made without a call to ``__init__`` (the
    buffer makes one for every offer of every turn)."""
    result: AddResult = _new(AddResult)
    _fill(result, item_id, outcome, reason, tokens, decision, item, evicted, None, None)
    return result


def refused_later(item_id: str, tokens: int, explainer: Explainer, subject: object) -> AddResult:
    """A refusal of ``item_id`` (of ``tokens``) whose reason and decision are
    ``explainer(subject)``, worked out when first read (once)."""
    result: AddResult = _new(AddResult)
    _fill(result, item_id, Outcome.REFUSED, None, tokens, None, None, (), explainer, subject)
    return result


@dataclass(frozen=True, slots=True)
class RefreshReport:
    """What one turn's refresh did to the buffer."""

    total_tokens: int
    coherence: Coherence
    admitted: tuple[AddResult, ...] = ()
    refreshed: tuple[AddResult, ...] = ()
    refused: tuple[AddResult, ...] = ()
    evicted: tuple[Eviction, ...] = ()
    """Every item that left: faded, replaced by this turn, or evicted to make room."""
    items: tuple[BufferItem, ...] = ()
    """The buffer after the refresh, in insertion order."""
    themes: tuple[str, ...] = ()

    @property
    def total_items(self) -> int:
        """How many items the buffer holds after the refresh."""
        return len(self.items)
