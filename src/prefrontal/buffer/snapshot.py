"""The buffer as data: snapshots, counters and the reports its operations return.

A :class:`BufferSnapshot` is everything a buffer is: restoring one gives a
buffer whose next snapshot is equal to it, and its JSON form (what the
working-memory store keeps) round-trips exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Protocol
from weakref import WeakValueDictionary

from pydantic import Field

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.models import BufferItem, BufferModel
from prefrontal.buffer.policies import Eviction
from prefrontal.buffer.recall_gate import RecallCounters
from prefrontal.buffer.salience import AdmissionDecision
from prefrontal.buffer.themes import Coherence
from prefrontal.enums import FastStrEnum
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
        """Raise :class:`WorkingMemoryError` unless this snapshot is a valid buffer state.

        A snapshot found valid once (or made by a live buffer, whose invariant it holds:
        :func:`known_valid`) is not checked again: a session's buffer is restored from
        the same remembered snapshot at each of a turn's two loads.
        """
        if _VALID.get(id(self)) is self:
            return self
        items = self.items
        tokens, last, ordered, below = 0, -1, True, True
        for item in items:  # (one pass: a session's buffer is restored at every load)
            seq = item.seq
            tokens += item.tokens
            ordered = ordered and seq >= last
            below = below and seq < self.next_seq
            last = seq
        problems = [
            "duplicate item ids" if len({i.item_id for i in items}) != len(items) else "",
            "more items than max_items" if len(items) > self.config.max_items else "",
            "more tokens than max_tokens" if tokens > self.config.max_tokens else "",
            "items out of order" if not ordered else "",
            "next_seq not above every item" if not below else "",
            f"unknown snapshot format {self.format}" if self.format != SNAPSHOT_FORMAT else "",
        ]
        found = [p for p in problems if p]
        if found:
            raise WorkingMemoryError(f"invalid buffer snapshot: {', '.join(found)}")
        return known_valid(self)


_VALID: Final[WeakValueDictionary[int, BufferSnapshot]] = WeakValueDictionary()
"""The snapshots known to be valid buffer states, by ``id()``: weakly held (a snapshot
gone is forgotten with its id, so an id found is that very object's, and no one's words
are kept alive here)."""


def known_valid(snapshot: BufferSnapshot) -> BufferSnapshot:
    """Note ``snapshot`` as a valid buffer state (:meth:`BufferSnapshot.check` then finds it
    so at once); ``snapshot``. For snapshots checked, or made by a buffer, whose operations
    keep its bounds, ids and order (:class:`~prefrontal.buffer.holding.Holding`)."""
    _VALID[id(snapshot)] = snapshot
    return snapshot


class Outcome(FastStrEnum):
    """What became of an offered item."""

    ADMITTED = "admitted"
    REFRESHED = "refreshed"
    """Already held: touched and updated, not added twice."""
    REFUSED = "refused"


class Explainer(Protocol):
    """Works out a refusal's reason and decision from what it was refused for (see
    :func:`refused_later`): each apart, as a reader may want only one."""

    def reason(self, subject: Any) -> str:
        """The refusal's reason."""
        ...

    def decision(self, subject: Any) -> AdmissionDecision | None:
        """The refusal's admission decision."""
        ...


class AddResult:
    """The fate of one offered item: admitted, refreshed or refused, and why.

    Like the other reports of the buffer's operations (:class:`RefreshReport`,
    :class:`~prefrontal.buffer.AdmissionDecision`,
    :class:`~prefrontal.buffer.Eviction`), a plain, immutable value: built for
    every offer of every turn and never stored, so no validated model (its
    fields held in one tuple, the cheapest object to make). A refusal may be made
    with its :attr:`reason` and :attr:`decision` left to work out
    (:func:`refused_later`): most of a turn's offers are refused and few of
    those reasons are ever read. Equal results have equal fields, however
    they were made.
    """

    __slots__ = ("_held",)
    _held: tuple[Any, ...]
    FIELDS: Final = ("item_id", "outcome", "reason", "tokens", "decision", "item", "evicted")
    """The fields, in order: what equality, hashing and the representation use."""

    def __new__(
        cls,
        item_id: str,
        outcome: Outcome,
        reason: str,
        tokens: int,
        decision: AdmissionDecision | None = None,
        item: BufferItem | None = None,
        evicted: tuple[Eviction, ...] = (),
    ) -> AddResult:
        return _made((item_id, outcome, reason, tokens, decision, item, evicted, None, None))

    @property
    def item_id(self) -> str:
        """The offered item's id."""
        item_id: str = self._held[0]
        return item_id

    @property
    def outcome(self) -> Outcome:
        """Admitted, refreshed or refused."""
        outcome: Outcome = self._held[1]
        return outcome

    @property
    def reason(self) -> str:
        """Why: ``admitted``, ``already_held``, or the refusal's reason."""
        explainer: Explainer | None = self._held[7]
        reason: str = self._held[2] if explainer is None else explainer.reason(self._held[8])
        return reason

    @property
    def tokens(self) -> int:
        """The offered item's tokens."""
        tokens: int = self._held[3]
        return tokens

    @property
    def decision(self) -> AdmissionDecision | None:
        """The admission decision (``None`` when refused before scoring or when refreshed)."""
        explainer: Explainer | None = self._held[7]
        if explainer is not None:
            return explainer.decision(self._held[8])
        decision: AdmissionDecision | None = self._held[4]
        return decision

    @property
    def item(self) -> BufferItem | None:
        """The item as held, when it was admitted or refreshed."""
        item: BufferItem | None = self._held[5]
        return item

    @property
    def evicted(self) -> tuple[Eviction, ...]:
        """What left to make room for it."""
        evicted: tuple[Eviction, ...] = self._held[6]
        return evicted

    def _fields(self) -> tuple[object, ...]:
        explainer: Explainer | None = self._held[7]
        if explainer is None:
            return self._held[:7]
        held = self._held
        reason, decision = explainer.reason(held[8]), explainer.decision(held[8])
        return (held[0], held[1], reason, held[3], decision, held[5], held[6])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AddResult):
            return NotImplemented
        return self is other or self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self.FIELDS, self._fields(), strict=True))
        return f"AddResult({shown})"

    def __reduce__(self) -> tuple[type[AddResult], tuple[object, ...]]:
        return AddResult, self._fields()


_new = object.__new__


def _made(held: tuple[Any, ...]) -> AddResult:
    """An :class:`AddResult` holding ``held`` (its seven fields, an explainer and its subject)."""
    result: AddResult = _new(AddResult)
    result._held = held
    return result


def add_result(
    item_id: str,
    outcome: Outcome,
    reason: str,
    tokens: int,
    decision: AdmissionDecision | None = None,
    item: BufferItem | None = None,
    evicted: tuple[Eviction, ...] = (),
) -> AddResult:
    """``AddResult(item_id, outcome, ...)`` (the buffer makes one for every offer of every turn)."""
    return _made((item_id, outcome, reason, tokens, decision, item, evicted, None, None))


def refused_later(item_id: str, tokens: int, explainer: Explainer, subject: object) -> AddResult:
    """A refusal of ``item_id`` (of ``tokens``) whose reason and decision are what
    ``explainer`` gives for ``subject``, worked out when read (pure functions: again at every
    read)."""
    return _made((item_id, Outcome.REFUSED, None, tokens, None, None, (), explainer, subject))


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
